"""ObjectMeta validation yields kube's causes: type, field path and message."""

from __future__ import annotations

import pytest

from kapi.errors import Cause
from kapi.validation import (
    validate_label_selector,
    validate_object_meta,
    validate_object_meta_update,
)

LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
NAME_PART_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def _create(
    meta: dict, namespaced: bool = True, rule: str = "subdomain"
) -> list[tuple[str, str, str]]:
    return [
        (c.type, c.field, c.message)
        for c in validate_object_meta(meta, namespaced=namespaced, name_rule=rule)
    ]


CREATE = [
    ({"name": "a", "namespace": "ns"}, True, []),
    ({"name": "a"}, False, []),
    (
        {"namespace": "ns"},
        True,
        [
            (
                "FieldValueRequired",
                "metadata.name",
                "Required value: name or generateName is required",
            )
        ],
    ),
    (
        {"name": "a"},
        True,
        [("FieldValueRequired", "metadata.namespace", "Required value")],
    ),
    (
        {"name": "a", "namespace": "ns"},
        False,
        [
            (
                "FieldValueForbidden",
                "metadata.namespace",
                "Forbidden: not allowed on this type",
            )
        ],
    ),
    (
        {"name": "a", "namespace": "Ns"},
        True,
        [
            (
                "FieldValueInvalid",
                "metadata.namespace",
                f'Invalid value: "Ns": {LABEL_MSG}',
            )
        ],
    ),
    (
        {"name": "a", "labels": {"-k": "v_"}},
        False,
        [
            (
                "FieldValueInvalid",
                "metadata.labels",
                f'Invalid value: "-k": {NAME_PART_MSG}',
            ),
            (
                "FieldValueInvalid",
                "metadata.labels",
                f'Invalid value: "v_": {VALUE_MSG}',
            ),
        ],
    ),
    ({"name": "a", "annotations": {"Example.COM/Key": "x"}}, False, []),
    (
        {"name": "a", "annotations": {"k": "x" * 262144}},
        False,
        [
            (
                "FieldValueTooLong",
                "metadata.annotations",
                "Too long: may not be more than 262144 bytes",
            )
        ],
    ),
    (
        {"name": "a", "generation": -1},
        False,
        [
            (
                "FieldValueInvalid",
                "metadata.generation",
                "Invalid value: -1: must be greater than or equal to 0",
            )
        ],
    ),
    ({"name": "a", "finalizers": ["kubernetes", "example.com/x"]}, False, []),
    (
        {"name": "a", "finalizers": ["custom"]},
        False,
        [
            (
                "FieldValueInvalid",
                "metadata.finalizers[0]",
                'Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified',
            )
        ],
    ),
    (
        {"name": "a", "finalizers": ["orphan", "foregroundDeletion"]},
        False,
        [
            (
                "FieldValueInvalid",
                "metadata.finalizers",
                'Invalid value: ["orphan","foregroundDeletion"]: finalizer orphan and foregroundDeletion cannot be both set',
            )
        ],
    ),
    (
        {"name": "a", "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap"}]},
        False,
        [
            (
                "FieldValueRequired",
                "metadata.ownerReferences[0].name",
                "Required value: must not be empty",
            ),
            (
                "FieldValueRequired",
                "metadata.ownerReferences[0].uid",
                "Required value: must not be empty",
            ),
        ],
    ),
    (
        {
            "name": "a",
            "ownerReferences": [
                {"apiVersion": "a/b/c", "kind": "K", "name": "n", "uid": "u"}
            ],
        },
        False,
        [
            (
                "FieldValueInvalid",
                "metadata.ownerReferences[0].apiVersion",
                'Invalid value: "a/b/c": must be <group>/<version> or <version>',
            )
        ],
    ),
    (
        {
            "name": "a",
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "A",
                    "name": "x",
                    "uid": "1",
                    "controller": True,
                },
                {
                    "apiVersion": "v1",
                    "kind": "B",
                    "name": "y",
                    "uid": "2",
                    "controller": True,
                },
            ],
        },
        False,
        [
            (
                "FieldValueInvalid",
                "metadata.ownerReferences",
                'Invalid value: [{"apiVersion":"v1","kind":"A","name":"x","uid":"1","controller":true},'
                '{"apiVersion":"v1","kind":"B","name":"y","uid":"2","controller":true}]: '
                'Only one reference can have Controller set to true. Found "true" in references for A/x and B/y',
            )
        ],
    ),
    (
        {"name": "a", "managedFields": [{"manager": "m", "operation": "Patch"}]},
        False,
        [
            (
                "FieldValueNotSupported",
                "metadata.managedFields[0].operation",
                'Unsupported value: "Patch": supported values: "Apply", "Update"',
            )
        ],
    ),
]


@pytest.mark.parametrize(("meta", "namespaced", "expected"), CREATE)
def test_validate_object_meta(meta: dict, namespaced: bool, expected: list) -> None:
    """Create-time metadata errors match kube's type, path and message."""
    assert _create(meta, namespaced) == expected


def test_generate_name() -> None:
    """generateName is checked as a prefix (a trailing '-' is fine), name as a whole."""
    assert _create({"generateName": "web-", "name": "web-x1z2"}, False) == []
    causes = _create({"generateName": "Web-", "name": "web-x"}, False)
    assert [c[1] for c in causes] == ["metadata.generateName"]


def test_label_rule_name() -> None:
    """A label-rule kind refuses dots in its name."""
    assert _create({"name": "a.b"}, False, "label") == [
        (
            "FieldValueInvalid",
            "metadata.name",
            'Invalid value: "a.b": must not contain dots',
        )
    ]


OLD = {
    "name": "a",
    "namespace": "ns",
    "uid": "u1",
    "resourceVersion": "5",
    "creationTimestamp": "2024-01-01T00:00:00Z",
    "generation": 2,
}

UPDATE = [
    ({}, []),
    ({"labels": {"x": "y"}, "annotations": {"k": "v"}, "generateName": "b-"}, []),
    (
        {"name": "b"},
        [
            (
                "FieldValueInvalid",
                "metadata.name",
                'Invalid value: "b": field is immutable',
            )
        ],
    ),
    (
        {"namespace": "other"},
        [
            (
                "FieldValueInvalid",
                "metadata.namespace",
                'Invalid value: "other": field is immutable',
            )
        ],
    ),
    (
        {"uid": "u2"},
        [
            (
                "FieldValueInvalid",
                "metadata.uid",
                'Invalid value: "u2": field is immutable',
            )
        ],
    ),
    (
        {"creationTimestamp": "2025-01-01T00:00:00Z"},
        [
            (
                "FieldValueInvalid",
                "metadata.creationTimestamp",
                'Invalid value: "2025-01-01T00:00:00Z": field is immutable',
            )
        ],
    ),
    (
        {"resourceVersion": ""},
        [
            (
                "FieldValueInvalid",
                "metadata.resourceVersion",
                'Invalid value: "": must be specified for an update',
            )
        ],
    ),
    (
        {"generation": 1},
        [
            (
                "FieldValueInvalid",
                "metadata.generation",
                "Invalid value: 1: must not be decremented",
            )
        ],
    ),
]


@pytest.mark.parametrize(("changes", "expected"), UPDATE)
def test_validate_object_meta_update(changes: dict, expected: list) -> None:
    """Identity fields are immutable; labels and annotations may change."""
    new = {**OLD, **changes}
    got = [(c.type, c.field, c.message) for c in validate_object_meta_update(new, OLD)]
    assert got == expected


def test_no_new_finalizers_while_deleting() -> None:
    """Once deletionTimestamp is set, finalizers may only be removed."""
    old = {
        **OLD,
        "deletionTimestamp": "2024-02-01T00:00:00Z",
        "finalizers": ["example.com/a"],
    }
    new = {**old, "finalizers": ["example.com/a", "example.com/c", "example.com/b"]}
    assert validate_object_meta_update(new, old) == [
        Cause(
            "FieldValueForbidden",
            "Forbidden: no new finalizers can be added if the object is being deleted, "
            'found new finalizers []string{"example.com/b", "example.com/c"}',
            "metadata.finalizers",
        )
    ]
    assert validate_object_meta_update({**old, "finalizers": []}, old) == []


def test_validate_label_selector() -> None:
    """metav1.LabelSelector validation reports kube's field causes."""
    causes = validate_label_selector(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "a", "operator": "In", "values": []},
                {"key": "b", "operator": "Exists", "values": ["x"]},
                {"key": "c", "operator": "Gt", "values": ["1"]},
            ],
        },
        "spec.selector",
    )
    assert [(c.type, c.field, c.message) for c in causes] == [
        (
            "FieldValueRequired",
            "spec.selector.matchExpressions[0].values",
            "Required value: must be specified when `operator` is 'In' or 'NotIn'",
        ),
        (
            "FieldValueForbidden",
            "spec.selector.matchExpressions[1].values",
            "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        ),
        (
            "FieldValueInvalid",
            "spec.selector.matchExpressions[2].operator",
            'Invalid value: "Gt": not a valid selector operator',
        ),
    ]
