"""Name checks return kube's detail strings; validate_name wraps them as causes."""

from __future__ import annotations

import pytest

from kapi.errors import Cause, invalid
from kapi.validation import (
    is_dns1123_label,
    is_dns1123_subdomain,
    is_path_segment_name,
    is_qualified_name,
    is_valid_label_value,
    validate_name,
)

SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
NAME_PART_MSG = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)

CASES = [
    (is_dns1123_subdomain, "example.com", []),
    (is_dns1123_subdomain, "a" * 253, []),
    (is_dns1123_subdomain, "Foo_", [SUBDOMAIN_MSG]),
    (is_dns1123_subdomain, "a\n", [SUBDOMAIN_MSG]),
    (is_dns1123_subdomain, "a" * 254, ["must be no more than 253 characters"]),
    (is_dns1123_label, "my-name", []),
    (is_dns1123_label, "a.b", ["must not contain dots"]),
    (is_dns1123_label, "-a", [LABEL_MSG]),
    (is_dns1123_label, "a" * 64, ["must be no more than 63 characters"]),
    (is_path_segment_name, "Foo_ bar", []),
    (is_path_segment_name, "", []),
    (is_path_segment_name, "..", ["may not be '..'"]),
    (is_path_segment_name, "a/b%c", ["may not contain '/'", "may not contain '%'"]),
    (is_qualified_name, "example.com/MyName", []),
    (is_qualified_name, "my.name", []),
    (is_qualified_name, "-a", [NAME_PART_MSG]),
    (is_qualified_name, "", ["name part must be non-empty", NAME_PART_MSG]),
    (is_qualified_name, "/a", ["prefix part must be non-empty"]),
    (is_qualified_name, "Example.com/a", ["prefix part " + SUBDOMAIN_MSG]),
    (
        is_qualified_name,
        "a" * 64,
        [
            "name part must be no more than 63 bytes",
        ],
    ),
    (is_valid_label_value, "", []),
    (is_valid_label_value, "My_value.1", []),
    (is_valid_label_value, "a" * 64, ["must be no more than 63 bytes"]),
]


@pytest.mark.parametrize(("check", "value", "expected"), CASES)
def test_checks(check, value: str, expected: list[str]) -> None:
    """Each check returns exactly kube's list of detail strings."""
    assert check(value) == expected


def test_validate_name_subdomain_message() -> None:
    """An invalid name yields one Invalid cause worded as kube does, and a Status message."""
    causes = validate_name("Foo_", "subdomain", "metadata.name")
    assert causes == [
        Cause(
            "FieldValueInvalid",
            f'Invalid value: "Foo_": {SUBDOMAIN_MSG}',
            "metadata.name",
        )
    ]
    err = invalid("", "ConfigMap", "Foo_", causes)
    assert (
        err.status["message"]
        == f'ConfigMap "Foo_" is invalid: metadata.name: Invalid value: "Foo_": {SUBDOMAIN_MSG}'
    )


@pytest.mark.parametrize(
    ("name", "rule", "prefix", "count"),
    [
        ("ok", "label", False, 0),
        ("a.b", "label", False, 1),
        ("web-", "subdomain", True, 0),
        ("web-", "subdomain", False, 1),
        ("a/b", "path-segment", False, 1),
        (".", "path-segment", True, 0),
    ],
)
def test_validate_name_rules(name: str, rule: str, prefix: bool, count: int) -> None:
    """Prefixes (generateName) may end in '-'; path-segment prefixes may be '.'."""
    assert len(validate_name(name, rule, "metadata.name", prefix=prefix)) == count


def test_unknown_rule() -> None:
    """An unknown rule is a programming error."""
    with pytest.raises(ValueError):
        validate_name("a", "dns", "metadata.name")
