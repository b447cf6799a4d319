"""CustomResourceDefinitions over raw HTTP: validation of the CRD, serving at once,
schema validation with field paths, pruning, defaulting, CEL, status and scale
subresources, several versions, schema changes and cleanup on delete."""

from __future__ import annotations

import time
import uuid

import pytest

from tests.api.conftest import assert_status

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def _crd(
    group: str, versions: list[dict] | None = None, scope: str = "Namespaced"
) -> dict:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["size"],
                "x-kubernetes-validations": [
                    {
                        "rule": "self.replicas <= self.maxReplicas",
                        "message": "replicas must not exceed maxReplicas",
                    }
                ],
                "properties": {
                    "size": {"type": "string", "enum": ["small", "large"]},
                    "replicas": {"type": "integer", "minimum": 0, "default": 1},
                    "maxReplicas": {"type": "integer", "default": 10},
                    "color": {"type": "string", "pattern": "^#[0-9a-f]{6}$"},
                    "port": {"x-kubernetes-int-or-string": True},
                    "note": {"type": "string", "nullable": True, "maxLength": 5},
                    "free": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    },
                },
            },
            "status": {
                "type": "object",
                "properties": {
                    "replicas": {"type": "integer"},
                    "selector": {"type": "string"},
                },
            },
        },
    }
    version = {
        "name": "v1",
        "served": True,
        "storage": True,
        "schema": {"openAPIV3Schema": schema},
        "subresources": {
            "status": {},
            "scale": {
                "specReplicasPath": ".spec.replicas",
                "statusReplicasPath": ".status.replicas",
                "labelSelectorPath": ".status.selector",
            },
        },
        "additionalPrinterColumns": [
            {"name": "Size", "type": "string", "jsonPath": ".spec.size"}
        ],
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gadgets.{group}"},
        "spec": {
            "group": group,
            "scope": scope,
            "names": {
                "plural": "gadgets",
                "singular": "gadget",
                "kind": "Gadget",
                "shortNames": ["gd"],
                "categories": ["all"],
            },
            "versions": versions or [version],
        },
    }


@pytest.fixture
def crd(api):
    group = f"g{uuid.uuid4().hex[:8]}.example.com"
    body = _crd(group)
    response = api.post(CRD_PATH, body)
    assert response.status_code == 201, response.text
    yield response.json()
    api.delete(f"{CRD_PATH}/gadgets.{group}")


def _gadgets(crd: dict, namespace: str, version: str = "v1") -> str:
    return f"/apis/{crd['spec']['group']}/{version}/namespaces/{namespace}/gadgets"


def _gadget(name: str, **spec) -> dict:
    return {
        "kind": "Gadget",
        "metadata": {"name": name},
        "spec": {"size": "small", **spec},
    }


def test_crd_is_established_and_served_at_once(api, crd, namespace):
    """A created CRD has NamesAccepted and Established, the cleanup finalizer, and
    the kind is in discovery and accepts objects in the very next request."""
    conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conditions == {"NamesAccepted": "True", "Established": "True"}
    assert crd["metadata"]["finalizers"] == [
        "customresourcecleanup.apiextensions.k8s.io"
    ]
    group = crd["spec"]["group"]
    resources = api.get(f"/apis/{group}/v1").json()["resources"]
    main = next(r for r in resources if r["name"] == "gadgets")
    assert (
        main["shortNames"] == ["gd"]
        and main["categories"] == ["all"]
        and main["namespaced"]
    )
    assert {r["name"] for r in resources} == {
        "gadgets",
        "gadgets/status",
        "gadgets/scale",
    }
    created = api.post(
        _gadgets(crd, namespace), {**_gadget("a"), "apiVersion": f"{group}/v1"}
    )
    assert created.status_code == 201, created.text


def test_invalid_crd_is_rejected_with_field_paths(api):
    """A non-structural schema and a bad scope are refused with 422 and kube's paths."""
    body = _crd("bad.example.com")
    body["spec"]["scope"] = "Galaxy"
    body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "properties"
    ]["size"] = {"enum": ["x"]}
    status = assert_status(api.post(CRD_PATH, body), 422, "Invalid")
    fields = {c["field"] for c in status["details"]["causes"]}
    assert "spec.scope" in fields
    assert (
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[size].type"
        in fields
    )


def test_bad_cel_rule_is_rejected(api):
    body = _crd("cel.example.com")
    body["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "x-kubernetes-validations"
    ] = [{"rule": "self.replicas <="}]
    status = assert_status(api.post(CRD_PATH, body), 422, "Invalid")
    assert status["details"]["causes"][0]["field"].endswith(
        "properties[spec].x-kubernetes-validations[0].rule"
    )


@pytest.mark.parametrize(
    ("spec", "field", "reason"),
    [
        ({"size": "huge"}, "spec.size", "FieldValueNotSupported"),
        ({"size": "small", "replicas": "3"}, "spec.replicas", "FieldValueTypeInvalid"),
        ({"size": "small", "replicas": -1}, "spec.replicas", "FieldValueInvalid"),
        ({"size": "small", "color": "red"}, "spec.color", "FieldValueInvalid"),
        ({"size": "small", "note": "too long"}, "spec.note", "FieldValueTooLong"),
        ({"size": "small", "port": True}, "spec.port", "FieldValueTypeInvalid"),
        ({}, "spec.size", "FieldValueRequired"),
        (
            {"size": "small", "replicas": 20, "maxReplicas": 3},
            "spec",
            "FieldValueInvalid",
        ),
    ],
)
def test_custom_resource_validation(api, crd, namespace, spec, field, reason):
    """Schema and CEL violations are 422 Invalid with the field path and reason."""
    status = assert_status(
        api.post(
            _gadgets(crd, namespace),
            {"kind": "Gadget", "metadata": {"name": "g"}, "spec": spec},
        ),
        422,
        "Invalid",
    )
    causes = {(c["field"], c["reason"]) for c in status["details"]["causes"]}
    assert (field, reason) in causes, causes


def test_nullable_int_or_string_and_preserved_fields_are_accepted(api, crd, namespace):
    body = _gadget("ok", note=None, port="http", free={"any": {"thing": 1}})
    created = api.post(_gadgets(crd, namespace), body)
    assert created.status_code == 201, created.text
    assert created.json()["spec"]["free"] == {"any": {"thing": 1}}


def test_pruning_defaulting_and_strict(api, crd, namespace):
    """Unknown fields are pruned (refused with fieldValidation=Strict) and
    defaults are filled in."""
    body = _gadget("p", unknown="x")
    body["extra"] = 1
    strict = api.post(_gadgets(crd, namespace) + "?fieldValidation=Strict", body)
    assert_status(strict, 400, "BadRequest")
    assert 'unknown field "spec.unknown"' in strict.json()["message"]
    created = api.post(_gadgets(crd, namespace), body).json()
    assert "extra" not in created and "unknown" not in created["spec"]
    assert created["spec"]["replicas"] == 1 and created["spec"]["maxReplicas"] == 10


def test_status_subresource_and_generation(api, crd, namespace):
    """The main resource ignores status; /status changes only status; generation
    moves only on spec changes."""
    url = _gadgets(crd, namespace)
    created = api.post(url, {**_gadget("s"), "status": {"replicas": 9}}).json()
    assert "status" not in created and created["metadata"]["generation"] == 1
    created["status"] = {"replicas": 2}
    created["spec"]["size"] = "large"
    updated = api.put(f"{url}/s/status", created).json()
    assert updated["status"] == {"replicas": 2} and updated["spec"]["size"] == "small"
    assert updated["metadata"]["generation"] == 1
    updated["spec"]["size"] = "large"
    updated["status"] = {"replicas": 7}
    again = api.put(f"{url}/s", updated).json()
    assert again["status"] == {"replicas": 2} and again["metadata"]["generation"] == 2


def test_scale_subresource(api, crd, namespace):
    url = _gadgets(crd, namespace)
    api.post(url, _gadget("sc", replicas=2))
    scale = api.get(f"{url}/sc/scale").json()
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"]["replicas"] == 2
    patched = api.request(
        "PATCH",
        f"{url}/sc/scale",
        data='{"spec":{"replicas":4}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.text
    assert api.get(f"{url}/sc").json()["spec"]["replicas"] == 4
    scale = api.get(f"{url}/sc/scale").json()
    scale["spec"]["replicas"] = 6
    assert api.put(f"{url}/sc/scale", scale).status_code == 200
    assert api.get(f"{url}/sc").json()["spec"]["replicas"] == 6


def test_printer_columns_in_table(api, crd, namespace):
    url = _gadgets(crd, namespace)
    api.post(url, _gadget("t"))
    table = api.get(
        url, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    ).json()
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Size"]
    assert table["rows"][0]["cells"] == ["t", "small"]


def test_schema_change_takes_effect_immediately(api, crd, namespace):
    url = _gadgets(crd, namespace)
    current = api.get(f"{CRD_PATH}/{crd['metadata']['name']}").json()
    current["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "properties"
    ]["size"]["enum"].append("huge")
    assert api.put(f"{CRD_PATH}/{crd['metadata']['name']}", current).status_code == 200
    assert api.post(url, _gadget("h", size="huge")).status_code == 201


def test_two_versions_share_storage(api, namespace):
    group = f"v{uuid.uuid4().hex[:8]}.example.com"
    body = _crd(group)
    v1 = body["spec"]["versions"][0]
    v2 = {**v1, "name": "v2", "storage": False}
    body["spec"]["versions"] = [v1, v2]
    assert api.post(CRD_PATH, body).status_code == 201
    try:
        created = api.post(
            f"/apis/{group}/v2/namespaces/{namespace}/gadgets", _gadget("m")
        )
        assert created.status_code == 201, created.text
        assert created.json()["apiVersion"] == f"{group}/v2"
        read = api.get(f"/apis/{group}/v1/namespaces/{namespace}/gadgets/m").json()
        assert read["apiVersion"] == f"{group}/v1"
        assert api.get(f"/apis/{group}").json()["preferredVersion"]["version"] == "v2"
    finally:
        api.delete(f"{CRD_PATH}/gadgets.{group}")


def test_delete_crd_removes_custom_resources_first(api, namespace):
    group = f"d{uuid.uuid4().hex[:8]}.example.com"
    assert api.post(CRD_PATH, _crd(group)).status_code == 201
    url = f"/apis/{group}/v1/namespaces/{namespace}/gadgets"
    for name in ("a", "b"):
        assert api.post(url, _gadget(name)).status_code == 201
    deleting = api.delete(f"{CRD_PATH}/gadgets.{group}")
    assert deleting.status_code == 200
    assert deleting.json()["metadata"]["deletionTimestamp"]
    assert_status(api.post(url, _gadget("c")), 405, "MethodNotAllowed")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if api.get(f"{CRD_PATH}/gadgets.{group}").status_code == 404:
            break
        time.sleep(0.5)
    assert api.get(f"{CRD_PATH}/gadgets.{group}").status_code == 404
    assert api.get(url).status_code == 404
