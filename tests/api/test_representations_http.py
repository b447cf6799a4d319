"""Encodings, negotiation, Tables, compression, size limits and auth over raw HTTP."""

from __future__ import annotations

import gzip
import json

import requests
import yaml

from tests.api.conftest import assert_status, own

TABLE = "application/json;as=Table;g=meta.k8s.io;v=v1"


def test_unauthenticated_requests_get_401_status(kapi_server):
    r = requests.get(f"{kapi_server.url}/api/v1/namespaces", verify=str(kapi_server.ca_path), timeout=10)
    assert_status(r, 401, "Unauthorized")
    bad = requests.get(
        f"{kapi_server.url}/api/v1/namespaces",
        headers={"Authorization": "Bearer wrong"},
        verify=str(kapi_server.ca_path),
        timeout=10,
    )
    assert_status(bad, 401, "Unauthorized")


def test_version_and_health_are_open(kapi_server):
    for path in ("/version", "/healthz", "/livez", "/readyz"):
        r = requests.get(kapi_server.url + path, verify=str(kapi_server.ca_path), timeout=10)
        assert r.status_code == 200, (path, r.text)
    version = requests.get(kapi_server.url + "/version", verify=str(kapi_server.ca_path), timeout=10).json()
    assert version["major"] == "1" and version["gitVersion"].startswith("v1.")


def test_version_is_truthful_and_kubectl_sees_no_skew(kapi_server):
    """/version names the release kapi validates against (the OpenAPI's version),
    built by CPython (no Go version); the bundled kubectl is that minor, so it
    prints no version-skew warning."""
    version = requests.get(kapi_server.url + "/version", verify=str(kapi_server.ca_path), timeout=10).json()
    openapi = requests.get(
        kapi_server.url + "/openapi/v2",
        headers={"Authorization": f"Bearer {kapi_server.token}"},
        verify=str(kapi_server.ca_path),
        timeout=60,
    ).json()
    assert version["gitVersion"] == openapi["info"]["version"] + "+kapi"
    assert version["gitVersion"].startswith(f"v{version['major']}.{version['minor']}.")
    assert version["goVersion"] == "" and version["compiler"] == "cpython"
    result = kapi_server.kubectl("version", "-o", "json")
    assert "version difference" not in result.stderr, result.stderr
    client = json.loads(result.stdout)["clientVersion"]
    assert (client["major"], client["minor"]) == (version["major"], version["minor"])


def test_yaml_in_and_out(api, namespace):
    body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  k: v\n"
    r = api.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/configmaps",
        data=body,
        headers={"Content-Type": "application/yaml", "Accept": "application/yaml"},
    )
    assert r.status_code == 201, r.text
    assert r.headers["Content-Type"].startswith("application/yaml")
    assert yaml.safe_load(r.text)["data"] == {"k": "v"}


def test_malformed_bodies_are_bad_request(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    r = api.request("POST", base, data="{not json", headers={"Content-Type": "application/json"})
    assert_status(r, 400, "BadRequest")
    r = api.request("POST", base, data="a: [b", headers={"Content-Type": "application/yaml"})
    assert_status(r, 400, "BadRequest")
    r = api.request("POST", base, data="[1, 2]", headers={"Content-Type": "application/json"})
    assert_status(r, 400, "BadRequest")


def test_unknown_content_type_is_415(api, namespace):
    r = api.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", data="x", headers={"Content-Type": "text/plain"})
    assert_status(r, 415, "UnsupportedMediaType")


def _chunks(body: bytes, size: int = 1000):
    """``body`` as a generator: requests sends it ``Transfer-Encoding: chunked``,
    without ``Content-Length``."""
    for start in range(0, len(body), size):
        yield body[start:start + size]


def test_chunked_bodies_are_read_whole(api, namespace):
    """A body sent in chunks, without Content-Length, is read whole, as
    kube-apiserver reads it: a create and a merge patch both apply."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    body = json.dumps({"metadata": {"name": "chunked"}, "data": {"a": "x" * 5000}}).encode()
    r = api.request("POST", base, data=_chunks(body), headers={"Content-Type": "application/json"})
    assert r.request.headers.get("Transfer-Encoding") == "chunked"
    assert "Content-Length" not in r.request.headers
    assert r.status_code == 201, r.text
    assert r.json()["data"]["a"] == "x" * 5000
    patch = json.dumps({"data": {"b": "y"}}).encode()
    r = api.request("PATCH", f"{base}/chunked", data=_chunks(patch, 5),
                    headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    assert r.json()["data"] == {"a": "x" * 5000, "b": "y"}
    assert api.get(f"{base}/chunked").json()["data"] == {"a": "x" * 5000, "b": "y"}


def test_chunked_body_over_3_mib_is_413_and_writes_nothing(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    big = ('{"metadata":{"name":"bigchunked"},"data":{"a":"' + "x" * (3 * 1024 * 1024) + '"}}').encode()
    r = api.request("POST", base, data=_chunks(big, 64 * 1024), headers={"Content-Type": "application/json"})
    assert_status(r, 413, "RequestEntityTooLarge")
    assert_status(api.get(f"{base}/bigchunked"), 404, "NotFound")


def test_body_over_3_mib_is_413(api, namespace):
    big = '{"metadata":{"name":"big"},"data":{"a":"' + "x" * (3 * 1024 * 1024) + '"}}'
    r = api.request("POST", f"/api/v1/namespaces/{namespace}/configmaps", data=big, headers={"Content-Type": "application/json"})
    assert_status(r, 413, "RequestEntityTooLarge")
    assert api.get(f"/api/v1/namespaces/{namespace}/configmaps/big").status_code == 404


def test_accept_negotiation(api):
    r = api.get("/api/v1/namespaces/default", headers={"Accept": "text/html"})
    assert_status(r, 406, "NotAcceptable")
    r = api.get("/api/v1/namespaces/default", headers={"Accept": "text/html, application/yaml;q=0.9, application/json;q=0.5"})
    assert r.headers["Content-Type"].startswith("application/yaml")
    r = api.get("/api/v1/namespaces/default", headers={"Accept": "text/html, */*"})
    assert r.headers["Content-Type"].startswith("application/json")
    assert r.json()["metadata"]["name"] == "default"
    # /version has no protobuf form: the client's JSON fallback wins.
    r = api.get("/version", headers={"Accept": "application/vnd.kubernetes.protobuf, */*"})
    assert r.headers["Content-Type"].startswith("application/json")


def test_pretty_output(api):
    compact = api.get("/api/v1/namespaces/default", params={"pretty": "false"}).text
    pretty = api.get("/api/v1/namespaces/default", params={"pretty": "true"}).text
    assert "\n  " in pretty and "\n  " not in compact


def test_table_for_lists_and_single_objects(api, namespace):
    api.post(f"/api/v1/namespaces/{namespace}/secrets", {"metadata": {"name": "s"}, "type": "Opaque", "data": {"a": "YQ=="}})
    table = api.get(f"/api/v1/namespaces/{namespace}/secrets", headers={"Accept": TABLE}).json()
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Type", "Data", "Age"]
    row = table["rows"][0]
    assert row["cells"][:3] == ["s", "Opaque", 1]
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["metadata"]["namespace"] == namespace
    one = api.get("/api/v1/namespaces/default", headers={"Accept": TABLE}).json()
    assert [c["name"] for c in one["columnDefinitions"]] == ["Name", "Status", "Age"]
    assert one["rows"][0]["cells"][:2] == ["default", "Active"]
    full = api.get("/api/v1/namespaces/default", headers={"Accept": TABLE}, params={"includeObject": "Object"}).json()
    assert full["rows"][0]["object"]["kind"] == "Namespace"
    none = api.get("/api/v1/namespaces/default", headers={"Accept": TABLE}, params={"includeObject": "None"}).json()
    assert "object" not in none["rows"][0]


def test_table_falls_back_when_listed_second(api):
    r = api.get("/api/v1/namespaces", headers={"Accept": "application/json;as=Table;g=meta.k8s.io;v=v9, application/json"})
    assert r.json()["kind"] == "NamespaceList"


def test_partial_object_metadata(api, namespace):
    api.post(f"/api/v1/namespaces/{namespace}/configmaps", {"metadata": {"name": "p"}, "data": {"secret": "x"}})
    listed = api.get(
        f"/api/v1/namespaces/{namespace}/configmaps",
        headers={"Accept": "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"},
    ).json()
    assert listed["kind"] == "PartialObjectMetadataList"
    (item,) = own(listed["items"])
    assert item["metadata"]["name"] == "p"
    assert all("data" not in i for i in listed["items"])
    one = api.get(
        f"/api/v1/namespaces/{namespace}/configmaps/p",
        headers={"Accept": "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"},
    ).json()
    assert one["kind"] == "PartialObjectMetadata" and "data" not in one


def test_large_responses_are_gzipped(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    for i in range(3):
        api.post(base, {"metadata": {"name": f"z{i}"}, "data": {"v": "y" * 60000}})
    raw = api.session.get(api.server.url + base, headers={"Accept-Encoding": "gzip"}, stream=True, timeout=30)
    assert raw.headers.get("Content-Encoding") == "gzip"
    body = gzip.decompress(raw.raw.read())
    assert b'"ConfigMapList"' in body
    small = api.get("/api/v1/namespaces/default", headers={"Accept-Encoding": "gzip"})
    assert "Content-Encoding" not in small.headers


def test_discovery_documents(api):
    versions = api.get("/api").json()
    assert versions["kind"] == "APIVersions" and versions["versions"] == ["v1"]
    core = api.get("/api/v1").json()
    assert core["kind"] == "APIResourceList"
    by_name = {r["name"]: r for r in core["resources"]}
    assert by_name["configmaps"]["shortNames"] == ["cm"]
    assert by_name["namespaces"]["namespaced"] is False
    assert "namespaces/status" in by_name
    assert set(by_name["configmaps"]["verbs"]) >= {"create", "get", "list", "watch", "delete", "deletecollection", "update", "patch"}
    groups = api.get("/apis").json()
    assert {g["name"] for g in groups["groups"]} >= {"coordination.k8s.io", "events.k8s.io"}
    assert api.get("/apis/coordination.k8s.io").json()["preferredVersion"]["version"] == "v1"
    assert_status(api.get("/apis/nope.example.com"), 404, "NotFound")


def test_aggregated_discovery(api):
    accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
    r = api.get("/apis", headers={"Accept": accept})
    assert r.headers["Content-Type"] == "application/json;as=APIGroupDiscoveryList;g=apidiscovery.k8s.io;v=v2"
    doc = r.json()
    assert doc["kind"] == "APIGroupDiscoveryList"
    leases = next(i for i in doc["items"] if i["metadata"]["name"] == "coordination.k8s.io")
    resource = leases["versions"][0]["resources"][0]
    assert resource["resource"] == "leases" and resource["scope"] == "Namespaced"
    core = api.get("/api", headers={"Accept": accept}).json()
    assert [i["metadata"]["name"] for i in core["items"]] == [""]


def test_openapi_documents(api):
    index = api.get("/openapi/v3").json()
    assert "api/v1" in index["paths"]
    doc = api.get(index["paths"]["api/v1"]["serverRelativeURL"]).json()
    patch = doc["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "", "version": "v1", "kind": "ConfigMap"}
    assert "fieldValidation" in {p["name"] for p in patch["parameters"]}
    assert api.get("/openapi/v2").json()["swagger"] == "2.0"
