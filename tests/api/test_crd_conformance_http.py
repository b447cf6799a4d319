"""What Kubernetes' conformance suite asks of CRDs and field validation, over raw
HTTP: kinds are DNS-1035 labels once lower-cased, a status write may carry a
condition without ``type`` and ``status``, defaults added to a schema show on
objects stored before, OpenAPI v2 publishes a CRD as kube's builder does, and
server-side apply reports unknown and duplicate fields in kube's words."""

from __future__ import annotations

import uuid

import pytest

from tests.api.conftest import assert_status
from tests.api.crds import CRD_PATH, crd_manifest

APPLY = {"Content-Type": "application/apply-patch+yaml"}
_PORTS = {
    "type": "array",
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
    "items": {
        "type": "object",
        "required": ["containerPort", "protocol"],
        "properties": {
            "containerPort": {"type": "integer"},
            "protocol": {"type": "string"},
            "name": {"type": "string"},
        },
    },
}
_SCHEMA = {
    "type": "object",
    "properties": {
        "a": {"type": "string"},
        "spec": {
            "type": "object",
            "properties": {"foo": {"type": "string"}, "ports": _PORTS},
        },
        "loose": {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
            "properties": {
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {"spec": {"type": "object"}},
                },
                "foo": {"type": "string"},
            },
        },
        "maybe": {
            "type": "object",
            "nullable": True,
            "properties": {"x": {"type": "string"}},
        },
    },
}


@pytest.fixture(scope="module")
def crd(api):
    """A cluster-scoped CRD whose kind is lower case with dashes, as the suite's."""
    group = f"c{uuid.uuid4().hex[:8]}.example.com"
    kind = f"e2e-test-{uuid.uuid4().hex[:4]}-crd"
    body = crd_manifest(group, f"{kind}s", kind, _SCHEMA)
    body["spec"]["scope"] = "Cluster"
    created = api.post(CRD_PATH, body)
    assert created.status_code == 201, created.text
    yield created.json()
    api.delete(f"{CRD_PATH}/{body['metadata']['name']}")


def _url(crd: dict, name: str = "") -> str:
    spec = crd["spec"]
    url = f"/apis/{spec['group']}/v1/{spec['names']['plural']}"
    return f"{url}/{name}" if name else url


def _cr(crd: dict, name: str, **fields) -> dict:
    spec = crd["spec"]
    return {
        "apiVersion": f"{spec['group']}/v1",
        "kind": spec["names"]["kind"],
        "metadata": {"name": name},
        **fields,
    }


def test_kinds_are_dns1035_labels_once_lower_cased(api, crd):
    """A dashed lower-case kind is served; a kind starting with a digit and a
    listKind equal to the kind are refused with kube's messages."""
    assert (
        crd["status"]["acceptedNames"]["listKind"]
        == crd["spec"]["names"]["kind"] + "List"
    )
    assert api.post(_url(crd), _cr(crd, "k")).status_code == 201
    body = crd_manifest("bad.example.com", "things", "1Thing", {"type": "object"})
    body["spec"]["names"]["listKind"] = "1Thing"
    status = assert_status(api.post(CRD_PATH, body), 422, "Invalid")
    messages = {c["field"]: c["message"] for c in status["details"]["causes"]}
    assert messages["spec.names.kind"] == (
        'Invalid value: "1Thing": may have mixed case, but should otherwise match: '
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
        "start with an alphabetic character, and end with an alphanumeric character "
        "(e.g. 'my-name',  or 'abc-123', regex used for validation is "
        "'[a-z]([-a-z0-9]*[a-z0-9])?')"
    )
    assert messages["spec.names.listKind"] == (
        'Invalid value: "1Thing": kind and listKind may not be the same'
    )


def test_status_takes_a_condition_without_type_and_status(api, crd):
    """kube's CRD status validation checks only the accepted names: a JSON patch
    of ``status.conditions`` with a bare message is stored (type and status
    empty), and the CRD stays established and served."""
    url = f"{CRD_PATH}/{crd['metadata']['name']}/status"
    patch = [
        {"op": "add", "path": "/status/conditions", "value": [{"message": "patched"}]}
    ]
    response = api.request(
        "PATCH",
        url,
        json=patch,
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert response.status_code == 200, response.text
    conditions = response.json()["status"]["conditions"]
    assert {"message": "patched", "type": "", "status": ""} in conditions
    assert {c["type"]: c["status"] for c in conditions}["Established"] == "True"
    assert api.get(_url(crd)).status_code == 200


def test_defaults_added_later_show_on_stored_objects(api, crd):
    """A default added to the schema applies to objects read from storage (get,
    list) without rewriting them; new objects are defaulted on create."""
    assert api.post(_url(crd), _cr(crd, "old")).status_code == 201
    # A list before the change: its cached answer must not outlive the schema.
    assert all("a" not in i for i in api.get(_url(crd)).json()["items"])
    url = f"{CRD_PATH}/{crd['metadata']['name']}"
    patch = [
        {
            "op": "add",
            "path": "/spec/versions/0/schema/openAPIV3Schema/properties/a/default",
            "value": "A",
        }
    ]
    headers = {"Content-Type": "application/json-patch+json"}
    try:
        assert api.request("PATCH", url, json=patch, headers=headers).status_code == 200
        old = api.get(_url(crd, "old")).json()
        assert old["a"] == "A"
        listed = {i["metadata"]["name"]: i for i in api.get(_url(crd)).json()["items"]}
        assert listed["old"]["a"] == "A"
        assert api.post(_url(crd), _cr(crd, "new")).json()["a"] == "A"
    finally:
        remove = [{"op": "remove", "path": patch[0]["path"]}]
        api.request("PATCH", url, json=remove, headers=headers)


def test_openapi_v2_publishes_what_kubectl_can_validate(api, crd):
    """v2 drops properties under preserve-unknown-fields and nullable nodes and
    adds apiVersion/kind/metadata to embedded resources; v3 keeps the schema."""
    spec = crd["spec"]
    group = ".".join(reversed(spec["group"].split(".")))
    name = f"{group}.v1.{spec['names']['kind']}"
    v2 = api.get("/openapi/v2").json()["definitions"][name]
    assert v2["properties"]["maybe"] == {}
    loose = v2["properties"]["loose"]
    assert "properties" not in loose and "type" not in loose
    assert loose["x-kubernetes-preserve-unknown-fields"] is True
    assert v2["properties"]["metadata"]["$ref"].endswith("v1.ObjectMeta")
    v3 = api.get(f"/openapi/v3/apis/{spec['group']}/v1").json()
    schema = v3["components"]["schemas"][name]
    template = schema["properties"]["loose"]["properties"]["template"]
    assert set(template["properties"]) == {"apiVersion", "kind", "metadata", "spec"}
    assert template["required"] == ["kind", "apiVersion"]


def test_openapi_v2_of_a_schema_open_at_its_root_is_a_bare_object(api):
    group = f"o{uuid.uuid4().hex[:8]}.example.com"
    open_root = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    body = crd_manifest(group, "opens", "Open", open_root)
    assert api.post(CRD_PATH, body).status_code == 201
    try:
        name = ".".join(reversed(group.split("."))) + ".v1.Open"
        published = api.get("/openapi/v2").json()["definitions"][name]
        assert published == {
            "type": "object",
            "x-kubernetes-group-version-kind": [
                {"group": group, "version": "v1", "kind": "Open"}
            ],
        }
    finally:
        api.delete(f"{CRD_PATH}/opens.{group}")


def _apply(api, crd, name: str, yaml: str, validation: str = "Strict"):
    spec = crd["spec"]
    head = f"apiVersion: {spec['group']}/v1\nkind: {spec['names']['kind']}\n"
    return api.request(
        "PATCH",
        _url(crd, name),
        data=head + yaml,
        headers=APPLY,
        params={"fieldManager": "m", "fieldValidation": validation},
    )


def test_apply_refuses_undeclared_fields_whatever_the_validation(api, crd):
    """kube's field manager cannot type a configuration with undeclared fields,
    in the root metadata or inside a preserved object's declared fields; it says
    so before any schema error (the embedded resource misses apiVersion)."""
    kind = crd["spec"]["names"]["kind"]
    response = _apply(
        api, crd, "u", "metadata:\n  name: u\nunknownField: x\n", "Ignore"
    )
    status = assert_status(response, 400, "BadRequest")
    assert status["message"] == (
        f"failed to create typed patch object (/u; {crd['spec']['group']}/v1, Kind={kind}): "
        ".unknownField: field not declared in schema"
    )
    yaml = (
        "metadata:\n  name: u\n  unknownMeta: x\n"
        "loose:\n  kept: 1\n  template:\n    kind: Sub\n    apiversion: a/v1\n    metadata: {name: s}\n"
    )
    status = assert_status(_apply(api, crd, "u", yaml), 400, "BadRequest")
    assert status["message"].endswith(
        "errors:\n  .metadata.unknownMeta: field not declared in schema\n"
        "  .loose.template.apiversion: field not declared in schema"
    )


def test_apply_reports_duplicate_keys_by_line(api, crd):
    """Duplicates are yaml.v2's strict errors: refused under Strict, warned under
    Warn, the last value kept."""
    yaml = "metadata:\n  name: d\nloose:\n  unknown: 1\n  foo: foo1\n  foo: foo2\n"
    status = assert_status(_apply(api, crd, "d", yaml), 400, "BadRequest")
    assert status["message"] == (
        "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal "
        'errors:\n  line 8: key "foo" already set in map'
    )
    warned = _apply(api, crd, "d", yaml, "Warn")
    assert warned.status_code == 201, warned.text
    assert (
        warned.headers["Warning"] == '299 - "line 8: key \\"foo\\" already set in map"'
    )
    assert warned.json()["loose"] == {"unknown": 1, "foo": "foo2"}


def test_yaml_create_reports_duplicates_by_line(api, namespace):
    """A YAML body's duplicate keys are the YAML decoder's errors, then the
    unknown fields, as kube's strict decoding error."""
    body = (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n  name: y\n"
        "spec: 1\ndata:\n  a: '1'\n"
    )
    response = api.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/configmaps",
        data=body,
        headers={"Content-Type": "application/yaml"},
        params={"fieldValidation": "Strict"},
    )
    status = assert_status(response, 400, "BadRequest")
    assert status["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding '
        'error: yaml: unmarshal errors:\n  line 5: key "name" already set in map, '
        'unknown field "spec"'
    )
