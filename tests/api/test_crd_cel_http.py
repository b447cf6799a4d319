"""``x-kubernetes-validations`` with kube's CEL libraries (quantity, url, ip/cidr,
regex, lists, strings, format), ``messageExpression``/``reason``/``fieldPath``,
transition rules and cost limits, against a real server."""

from __future__ import annotations

import uuid

import pytest

from tests.api.conftest import assert_status
from tests.api.crds import CRD_PATH, crd_manifest, served_collection

_SPEC_RULES = [
    {
        "rule": "!has(self.memory) || (isQuantity(self.memory) && "
        "quantity(self.memory).compareTo(quantity('2Gi')) < 0)",
        "message": "memory must be a quantity below 2Gi",
        "fieldPath": ".memory",
    },
    {
        "rule": "!has(self.endpoint) || (isURL(self.endpoint) && "
        "url(self.endpoint).getScheme() == 'https')",
        "messageExpression": "'endpoint scheme must be https, not ' + "
        "url(self.endpoint).getScheme()",
        "message": "endpoint must be an https URL",
        "fieldPath": ".endpoint",
    },
    {
        "rule": "!has(self.network) || !has(self.address) || "
        "cidr(self.network).containsIP(ip(self.address))",
        "message": "address must be inside network",
        "reason": "FieldValueForbidden",
        "fieldPath": ".address",
    },
    {
        "rule": "!has(self.priorities) || "
        "(self.priorities.isSorted() && self.priorities.sum() <= 100)",
        "messageExpression": "'priorities must be sorted and sum to at most 100, sum is ' "
        "+ string(self.priorities.sum())",
    },
    {
        "rule": "!has(self.label) || self.label.lowerAscii() == self.label",
        "messageExpression": "'label ' + self.label + ' must be lower case'",
        "reason": "FieldValueRequired",
    },
    {
        "rule": "!has(self.host) || "
        "!format.named('dns1123Label').value().validate(self.host).hasValue()",
        "message": "host must be a DNS label",
    },
    {
        "rule": "!has(self.version) || self.version.find('^v[0-9]+$') != ''",
        "message": "version must look like v1",
    },
    {
        "rule": "!has(self.divisor) || 10 / self.divisor > 1",
        "message": "divisor too large",
    },
    {
        # Optional field selection (a.?b), which the cel package cannot parse.
        "rule": "self.?limits.?cpu.orValue(1) <= 8",
        "message": "at most 8 cpus",
        "fieldPath": ".limits.cpu",
    },
    {
        # Property names that are CEL keywords are escaped (kube's __namespace__).
        "rule": "!has(self.__namespace__) || self.__namespace__ != 'kube-system'",
        "message": "kube-system is reserved",
    },
    {
        # kube's semver library: a normalized minimum release.
        "rule": "!has(self.release) || (isSemver(self.release, true) && "
        "semver(self.release, true).isGreaterThan(semver('1.27.0')) && "
        "semver(self.release, true).major() == 1)",
        "messageExpression": "'release must be a 1.x version above 1.27.0, not ' + self.release",
        "message": "release must be a 1.x version above 1.27.0",
        "fieldPath": ".release",
    },
    {
        # date-time strings are timestamps, duration strings durations.
        "rule": "!has(self.expires) || (self.expires > timestamp('2000-01-01T00:00:00Z')"
        " && self.grace <= duration('1h'))",
        "message": "expires must be after 2000 with at most an hour of grace",
    },
]

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "x-kubernetes-validations": _SPEC_RULES,
            "properties": {
                "memory": {"type": "string"},
                "endpoint": {"type": "string"},
                "network": {"type": "string"},
                "address": {"type": "string"},
                "priorities": {"type": "array", "items": {"type": "integer"}},
                "label": {"type": "string"},
                "host": {"type": "string"},
                "version": {"type": "string"},
                "release": {"type": "string"},
                "divisor": {"type": "integer"},
                "namespace": {"type": "string"},
                "limits": {
                    "type": "object",
                    "properties": {"cpu": {"type": "integer"}},
                },
                "expires": {"type": "string", "format": "date-time"},
                "grace": {"type": "string", "format": "duration"},
                "immutableId": {
                    "type": "string",
                    "x-kubernetes-validations": [
                        {
                            "rule": "self == oldSelf",
                            "message": "immutableId is immutable",
                        }
                    ],
                },
                "counter": {
                    "type": "integer",
                    "x-kubernetes-validations": [
                        {
                            "rule": "!oldSelf.hasValue() || self >= oldSelf.value()",
                            "optionalOldSelf": True,
                            "message": "counter may not decrease",
                        }
                    ],
                },
                "slots": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {
                        "type": "object",
                        "required": ["name"],
                        "x-kubernetes-validations": [
                            {
                                "rule": "self.size >= oldSelf.size",
                                "message": "a slot may only grow",
                            }
                        ],
                        "properties": {
                            "name": {"type": "string"},
                            "size": {"type": "integer"},
                        },
                    },
                },
                "pairs": {
                    "type": "array",
                    "maxItems": 2000,
                    "items": {"type": "integer"},
                    "x-kubernetes-validations": [
                        {
                            "rule": "self.all(x, self.all(y, true))",
                            "message": "pairs checked",
                        }
                    ],
                },
            },
        }
    },
}



@pytest.fixture(scope="module")
def rules_url(api):
    yield from served_collection(api, "c", "rules", "Rule", SCHEMA)


def _create(api, url: str, spec: dict, name: str | None = None):
    name = name or f"r-{uuid.uuid4().hex[:8]}"
    return api.post(url, {"kind": "Rule", "metadata": {"name": name}, "spec": spec})


VALID = {
    "memory": "1536Mi",
    "endpoint": "https://example.com:8443/x",
    "network": "10.0.0.0/8",
    "address": "10.1.2.3",
    "priorities": [1, 2, 50],
    "label": "lower",
    "host": "web-1",
    "version": "v12",
    "release": "v1.30",
    "divisor": 3,
    "namespace": "apps",
    "expires": "2030-01-01T00:00:00Z",
    "grace": "30m",
}


def test_a_resource_passing_every_library_rule_is_accepted(api, rules_url):
    created = _create(api, rules_url, VALID)
    assert created.status_code == 201, created.text


@pytest.mark.parametrize(
    ("change", "field", "reason", "message"),
    [
        (
            {"memory": "3Gi"},
            "spec.memory",
            "FieldValueInvalid",
            'Invalid value: "object": memory must be a quantity below 2Gi',
        ),
        (
            {"memory": "lots"},
            "spec.memory",
            "FieldValueInvalid",
            'Invalid value: "object": memory must be a quantity below 2Gi',
        ),
        (
            {"endpoint": "http://example.com"},
            "spec.endpoint",
            "FieldValueInvalid",
            'Invalid value: "object": endpoint scheme must be https, not http',
        ),
        (
            # messageExpression fails (not a URL): the static message is used.
            {"endpoint": "not a url"},
            "spec.endpoint",
            "FieldValueInvalid",
            'Invalid value: "object": endpoint must be an https URL',
        ),
        (
            {"address": "192.168.0.1"},
            "spec.address",
            "FieldValueForbidden",
            "Forbidden: address must be inside network",
        ),
        (
            {"priorities": [3, 1]},
            "spec",
            "FieldValueInvalid",
            'Invalid value: "object": priorities must be sorted and sum to at most '
            "100, sum is 4",
        ),
        (
            {"priorities": [60, 70]},
            "spec",
            "FieldValueInvalid",
            'Invalid value: "object": priorities must be sorted and sum to at most '
            "100, sum is 130",
        ),
        (
            {"label": "Upper"},
            "spec",
            "FieldValueRequired",
            "Required value: label Upper must be lower case",
        ),
        (
            {"host": "Not_A_Label"},
            "spec",
            "FieldValueInvalid",
            'Invalid value: "object": host must be a DNS label',
        ),
        (
            {"version": "1.0"},
            "spec",
            "FieldValueInvalid",
            'Invalid value: "object": version must look like v1',
        ),
        (
            {"release": "1.27.0-rc.1"},
            "spec.release",
            "FieldValueInvalid",
            'Invalid value: "object": release must be a 1.x version above 1.27.0, not 1.27.0-rc.1',
        ),
        (
            {"release": "not-a-version"},
            "spec.release",
            "FieldValueInvalid",
            'Invalid value: "object": release must be a 1.x version above 1.27.0, not not-a-version',
        ),
        (
            {"divisor": 0},
            "spec",
            "FieldValueInvalid",
            'Invalid value: "object": division by zero evaluating rule: divisor too large',
        ),
        (
            {"limits": {"cpu": 16}},
            "spec.limits.cpu",
            "FieldValueInvalid",
            'Invalid value: "object": at most 8 cpus',
        ),
        (
            {"namespace": "kube-system"},
            "spec",
            "FieldValueInvalid",
            'Invalid value: "object": kube-system is reserved',
        ),
        (
            {"expires": "1999-12-31T23:00:00Z"},
            "spec",
            "FieldValueInvalid",
            'Invalid value: "object": expires must be after 2000 with at most an hour '
            "of grace",
        ),
        (
            {"grace": "2h"},
            "spec",
            "FieldValueInvalid",
            'Invalid value: "object": expires must be after 2000 with at most an hour '
            "of grace",
        ),
    ],
)
def test_failing_rules_report_message_reason_and_field(
    api, rules_url, change, field, reason, message
):
    status = assert_status(_create(api, rules_url, {**VALID, **change}), 422, "Invalid")
    causes = [
        (c["field"], c["reason"], c["message"]) for c in status["details"]["causes"]
    ]
    assert causes == [(field, reason, message)], causes


def test_transition_rules_see_the_old_object(api, rules_url):
    """``oldSelf`` rules run on update only (or with ``optionalOldSelf`` on create
    too), and list-map items are matched to their old selves by key."""
    spec = {
        "immutableId": "a",
        "counter": 5,
        "slots": [{"name": "x", "size": 2}, {"name": "y", "size": 1}],
    }
    created = _create(api, rules_url, spec, name="transition")
    assert created.status_code == 201, created.text
    url = f"{rules_url}/transition"

    def put(**change):
        current = api.get(url).json()
        current["spec"].update(change)
        return api.put(url, current)

    status = assert_status(put(immutableId="b"), 422, "Invalid")
    assert [(c["field"], c["message"]) for c in status["details"]["causes"]] == [
        ("spec.immutableId", 'Invalid value: "string": immutableId is immutable')
    ]
    status = assert_status(put(counter=4), 422, "Invalid")
    assert status["details"]["causes"][0]["message"] == (
        'Invalid value: "integer": counter may not decrease'
    )
    # Reordered slots are matched by name: y shrinking is refused at its new index.
    shrunk = put(slots=[{"name": "y", "size": 0}, {"name": "x", "size": 2}])
    status = assert_status(shrunk, 422, "Invalid")
    assert [(c["field"], c["message"]) for c in status["details"]["causes"]] == [
        ("spec.slots[0]", 'Invalid value: "object": a slot may only grow')
    ]
    grown = put(counter=6, slots=[{"name": "y", "size": 3}, {"name": "z", "size": 0}])
    assert grown.status_code == 200, grown.text


def test_runtime_cost_limit_stops_an_expensive_rule(api, rules_url):
    """The quadratic rule is accepted for a short list and refused with kube's
    per-call cost message for a long one (the server does not spend the time)."""
    assert _create(api, rules_url, {"pairs": list(range(50))}).status_code == 201
    status = assert_status(
        _create(api, rules_url, {"pairs": list(range(1500))}), 422, "Invalid"
    )
    (cause,) = status["details"]["causes"]
    assert cause["field"] == "spec.pairs"
    assert cause["message"] == (
        "Invalid value: \"array\": 'operation cancelled: actual cost limit exceeded': "
        "no further validation rules will be run due to call cost exceeds limit for "
        "rule: pairs checked"
    )


def _crd_with_rules(rules: list[dict], properties: dict | None = None) -> dict:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "x-kubernetes-validations": rules,
                "properties": properties
                or {
                    "names": {"type": "array", "items": {"type": "string"}},
                    "name": {"type": "string"},
                },
            }
        },
    }
    return crd_manifest(f"bad{uuid.uuid4().hex[:6]}.example.com", "rules", "Rule", schema)


@pytest.mark.parametrize(
    ("rule", "field", "reason", "text"),
    [
        (
            {"rule": "self.names.all(a, self.names.all(b, a.contains(b)))"},
            "rule",
            "FieldValueForbidden",
            "estimated rule cost exceeds budget by factor of more than 100x",
        ),
        (
            {"rule": "noSuchFunction(self.name)"},
            "rule",
            "FieldValueInvalid",
            "undeclared reference to 'noSuchFunction'",
        ),
        (
            {"rule": "self.name ==", "message": "x"},
            "rule",
            "FieldValueInvalid",
            "compilation failed",
        ),
        (
            {"rule": "true", "messageExpression": "self.name +"},
            "messageExpression",
            "FieldValueInvalid",
            "messageExpression compilation failed",
        ),
        (
            {"rule": "true", "reason": "FieldValueBogus"},
            "reason",
            "FieldValueNotSupported",
            'supported values: "FieldValueInvalid"',
        ),
        (
            {"rule": "true", "fieldPath": ".missing"},
            "fieldPath",
            "FieldValueInvalid",
            "does not refer to a valid field",
        ),
    ],
)
def test_crd_with_a_bad_rule_is_refused(api, rule, field, reason, text):
    status = assert_status(api.post(CRD_PATH, _crd_with_rules([rule])), 422, "Invalid")
    path = (
        "spec.versions[0].schema.openAPIV3Schema.properties[spec]."
        f"x-kubernetes-validations[0].{field}"
    )
    matching = [
        c
        for c in status["details"]["causes"]
        if c["field"] == path and c["reason"] == reason and text in c["message"]
    ]
    assert matching, status["details"]["causes"]


def test_oldself_where_items_cannot_be_correlated_is_refused(api):
    properties = {
        "items": {
            "type": "array",
            "maxItems": 10,
            "items": {
                "type": "object",
                "x-kubernetes-validations": [{"rule": "self.a == oldSelf.a"}],
                "properties": {"a": {"type": "string", "maxLength": 10}},
            },
        }
    }
    status = assert_status(
        api.post(CRD_PATH, _crd_with_rules([], properties)), 422, "Invalid"
    )
    (cause,) = status["details"]["causes"]
    assert cause["field"].endswith(
        "properties[items].items.x-kubernetes-validations[0].rule"
    )
    assert (
        "oldSelf cannot be used on the uncorrelatable portion of the schema"
        in (cause["message"])
    )
