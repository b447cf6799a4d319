"""Bad requests answered with the code, reason and message kube-apiserver gives.

Clients and tools match on ``reason`` (and people on the message): a wrong JSON
type in a built-in kind is a decode error (400 BadRequest), an invalid
``fieldValidation`` is 422 on the options object naming the parameter, a method
no route serves is 405 MethodNotAllowed, and a custom resource's schema limits
fail with kube's ``Too long`` / ``Too many`` causes.
"""

from __future__ import annotations

import time

import pytest

from tests.api.conftest import assert_status


def _cm(name: str, data) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def test_wrong_json_type_in_a_built_in_kind_is_bad_request(api, namespace):
    """A number in a ConfigMap's data, on create and on update: kube's decoder
    refuses it before validation, naming the Go struct field and type."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    status = assert_status(api.post(base, _cm("typed", {"a": 1})), 400, "BadRequest")
    assert status["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal '
        "number into Go struct field ConfigMap.data of type string"
    )
    assert api.post(base, _cm("typed", {"a": "1"})).status_code == 201
    assert_status(api.put(f"{base}/typed", _cm("typed", {"a": True})), 400, "BadRequest")
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"a": "b"}},
            "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": "80"}]}]},
            },
        },
    }
    status = assert_status(
        api.post(f"/apis/apps/v1/namespaces/{namespace}/deployments", deployment), 400, "BadRequest"
    )
    assert status["message"].endswith(
        "json: cannot unmarshal string into Go struct field "
        "ContainerPort.spec.template.spec.containers.ports.containerPort of type int32"
    )


def test_warnings_about_fields_with_control_characters_are_quoted(api, namespace):
    """A warning naming a field whose key holds a newline or a control
    character escapes it as kube's ``strconv.Quote`` does (a raw newline
    would split the header): the write succeeds, with the warning."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    body = {**_cm("ctl", {"a": "1"}), "odd\nkey\u0001": 1}
    response = api.post(f"{base}?fieldValidation=Warn", body)
    assert response.status_code == 201, response.text
    assert response.headers["Warning"] == '299 - "unknown field \\"odd\\nkey\\x01\\""'
    assert api.get(f"{base}/ctl").json()["data"] == {"a": "1"}


@pytest.mark.parametrize(
    ("method", "kind"), [("POST", "CreateOptions"), ("PUT", "UpdateOptions"), ("PATCH", "PatchOptions")]
)
def test_invalid_field_validation_is_422_naming_the_parameter(api, namespace, method, kind):
    """kube's ValidateFieldValidation: values are case-sensitive, and the error is
    on the options object with the field ``fieldValidation``."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    assert api.post(base, _cm("fv", {"a": "1"})).status_code == 201
    path = base if method == "POST" else f"{base}/fv"
    headers = {"Content-Type": "application/merge-patch+json"} if method == "PATCH" else {}
    response = api.request(
        method, path, json=_cm("fv", {"a": "2"}), params={"fieldValidation": "strict"}, headers=headers
    )
    status = assert_status(response, 422, "Invalid")
    supported = 'supported values: "", "Ignore", "Strict", "Warn"'
    assert status["message"] == (
        f'{kind}.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": {supported}'
    )
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueNotSupported",
            "message": f'Unsupported value: "strict": {supported}',
            "field": "fieldValidation",
        }
    ]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", "/api/v1/namespaces/{ns}/configmaps"),
        ("PATCH", "/api/v1/namespaces/{ns}/configmaps"),
        ("PUT", "/api/v1/namespaces"),
        ("POST", "/api/v1/namespaces/{ns}/configmaps/one"),
        ("DELETE", "/api/v1/namespaces"),
        ("GET", "/apis/authentication.k8s.io/v1/tokenreviews"),
    ],
)
def test_method_without_a_route_is_405(api, namespace, method, path):
    """PUT or PATCH on a collection, POST on an object, a verb the resource does
    not serve (deletecollection of namespaces, list of tokenreviews):
    go-restful's 405, as kube registers no route for them."""
    headers = {"Content-Type": "application/merge-patch+json"} if method == "PATCH" else {}
    response = api.request(method, path.format(ns=namespace), json=_cm("one", {}), headers=headers)
    status = assert_status(response, 405, "MethodNotAllowed")
    assert status["message"] == "the server does not allow this method on the requested resource"
    assert status["details"] == {}


def _crd(group: str) -> dict:
    spec_schema = {
        "type": "object",
        "properties": {
            "s": {"type": "string", "maxLength": 10},
            "l": {"type": "array", "maxItems": 2, "items": {"type": "string"}},
            "m": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string"}},
            "flag": {"type": "boolean"},
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"gizmos.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo", "listKind": "GizmoList"},
            "versions": [
                {
                    "name": "v1alpha1",
                    "served": True,
                    "storage": False,
                    "deprecated": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec_schema}}},
                },
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec_schema}}},
                },
            ],
        },
    }


@pytest.fixture
def gizmos(api, namespace):
    """A CRD (group unique to the test) with schema limits and a deprecated
    version; yields the v1 collection path."""
    group = f"{namespace}.example.com"
    created = api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", _crd(group))
    assert created.status_code == 201, created.text
    path = f"/apis/{group}/v1/namespaces/{namespace}/gizmos"
    deadline = time.monotonic() + 30
    while api.get(path).status_code != 200:
        assert time.monotonic() < deadline, "the CRD was not served"
        time.sleep(0.2)
    yield path
    api.delete(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.{group}")


@pytest.mark.parametrize(
    ("spec", "reason", "field", "message"),
    [
        ({"s": "x" * 11}, "FieldValueTooLong", "spec.s", "Too long: may not be longer than 10"),
        ({"l": ["a", "b", "c"]}, "FieldValueTooMany", "spec.l", "Too many: 3: must have at most 2 items"),
        ({"m": {"a": "1", "b": "2"}}, "FieldValueTooMany", "spec.m", "Too many: 2: must have at most 1 items"),
    ],
)
def test_crd_schema_limits_fail_with_kube_reasons(api, gizmos, spec, reason, field, message):
    """maxLength, maxItems, maxProperties: kube's causes and message."""
    body = {"apiVersion": gizmos.split("/")[2] + "/v1", "kind": "Gizmo", "metadata": {"name": "g"}, "spec": spec}
    status = assert_status(api.post(gizmos, body), 422, "Invalid")
    assert status["details"]["causes"] == [{"reason": reason, "message": message, "field": field}]
    assert status["message"].endswith(f"is invalid: {field}: {message}")


def test_custom_resource_refuses_strategic_merge_patch(api, gizmos, kapi_server, namespace):
    """415 listing the patch types a custom resource takes. ``kubectl patch``
    (strategic by default) fails as against kube; ``--type merge`` works."""
    group = gizmos.split("/")[2]
    body = {"apiVersion": f"{group}/v1", "kind": "Gizmo", "metadata": {"name": "g"}, "spec": {"s": "a"}}
    assert api.post(gizmos, body).status_code == 201
    response = api.request(
        "PATCH",
        f"{gizmos}/g",
        data='{"spec": {"s": "b"}}',
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    status = assert_status(response, 415, "UnsupportedMediaType")
    assert status["message"] == (
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )
    target = (f"gizmos.{group}", "g", "-n", namespace, "-p", '{"spec": {"s": "c"}}')
    refused = kapi_server.kubectl("patch", *target, check=False)
    assert refused.returncode != 0
    assert "the body of the request was in an unknown format" in refused.stderr, refused.stderr
    kapi_server.kubectl("patch", *target, "--type", "merge")
    assert api.get(f"{gizmos}/g").json()["spec"]["s"] == "c"


def test_deprecated_version_warns_on_every_request(api, gizmos, kapi_server, namespace):
    """Every request to a deprecated version carries kube's default warning,
    naming the version to use; the current version carries none."""
    group = gizmos.split("/")[2]
    old = gizmos.replace("/v1/", "/v1alpha1/")
    expected = f'299 - "{group}/v1alpha1 Gizmo is deprecated; use {group}/v1 Gizmo"'
    body = {"apiVersion": f"{group}/v1alpha1", "kind": "Gizmo", "metadata": {"name": "w"}}
    for response in (api.post(old, body), api.get(old), api.get(f"{old}/w"), api.get(f"{old}/missing")):
        assert response.headers.get("Warning") == expected, response.text
    assert "Warning" not in api.get(gizmos).headers
    result = kapi_server.kubectl("get", f"gizmos.v1alpha1.{group}", "-n", namespace)
    assert f"Warning: {group}/v1alpha1 Gizmo is deprecated; use {group}/v1 Gizmo" in result.stderr


def test_crd_without_printer_columns_serves_kubes_default_table(api, gizmos):
    """Name, then Age as a ``date`` column (kube's serveDefaultColumnsIfEmpty)."""
    group = gizmos.split("/")[2]
    body = {"apiVersion": f"{group}/v1", "kind": "Gizmo", "metadata": {"name": "t"}}
    assert api.post(gizmos, body).status_code == 201
    table = api.get(gizmos, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}).json()
    assert [(c["name"], c["type"], c["format"]) for c in table["columnDefinitions"]] == [
        ("Name", "string", "name"),
        ("Age", "date", ""),
    ]
    assert table["rows"][0]["cells"][0] == "t"
    assert table["rows"][0]["cells"][1].endswith("s")
