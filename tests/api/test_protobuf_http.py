"""Responses as ``application/vnd.kubernetes.protobuf``.

client-go controllers ask for ``application/vnd.kubernetes.protobuf,application/json``.
Every response here is read back (``tests/protobuf/kube_proto.py``: kapi's
decoder, checked against bodies real kubectl wrote) and compared with the JSON
the server answers for the same request: the two encodings must carry the same object.

Negotiation follows kube-apiserver: built-in kinds are protobuf, custom resources
JSON (406 when the client accepts protobuf only), PartialObjectMetadata may be
protobuf anywhere, Table never.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import django
import pytest
import requests

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
django.setup()  # the catalog of built-in kinds reads settings

from kapi.kinds.builtin import BUILTIN_TYPES  # noqa: E402 (after django.setup())
from tests.api.conftest import ROOT_CA, assert_status  # noqa: E402
from tests.api.crds import served_collection  # noqa: E402
from tests.api.test_builtin_kinds_http import MINIMAL  # noqa: E402
from tests.protobuf.kube_proto import (  # noqa: E402
    decode_object,
    decode_watch_frames,
    to_json,
)

PROTOBUF = "application/vnd.kubernetes.protobuf"
CLIENT_GO = f"{PROTOBUF},application/json"
POM_LIST = "as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"


def without_nulls(value):
    """JSON as Go reads it: a ``null`` is the same as an absent field, and so is
    an empty list (protobuf cannot tell ``[]`` from no items; Go decodes both to
    a nil slice)."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None and v != []}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def as_json(body: bytes) -> dict:
    """The object in a protobuf body, as JSON, via the published .proto files."""
    api_version, kind, message = decode_object(body)
    return {"apiVersion": api_version, "kind": kind, **to_json(message)}


def list_items_without_type(doc: dict) -> dict:
    """List items carry no apiVersion/kind in protobuf (the Go items have an
    empty TypeMeta), so compare them without."""
    items = [{k: v for k, v in item.items() if k not in ("apiVersion", "kind")} for item in doc["items"]]
    return {**doc, "items": items}


def _collection(rt, namespace: str) -> str:
    base = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    return f"{base}/namespaces/{namespace}/{rt.plural}" if rt.namespaced else f"{base}/{rt.plural}"


#: Tries at reading one version of an object in both encodings.
_READS = 20


def _version(obj: dict) -> str:
    return obj["metadata"]["resourceVersion"]


def _gvk(rt) -> tuple[str, str, str]:
    return (rt.group, rt.version, rt.kind)


@pytest.mark.parametrize(
    "rt",
    [rt for rt in BUILTIN_TYPES if _gvk(rt) in MINIMAL],
    ids=lambda rt: f"{rt.plural}.{rt.group or 'core'}",
)
def test_every_builtin_kind_round_trips_as_protobuf(api, namespace, rt):
    """create, get, list and delete answer protobuf that decodes to the JSON answer."""
    collection = _collection(rt, namespace)
    name = f"pb-{namespace}"
    body = {"apiVersion": rt.api_version, "kind": rt.kind, "metadata": {"name": name}}
    body.update(MINIMAL[(rt.group, rt.version, rt.kind)])
    if rt.kind == "ControllerRevision":
        body["data"] = {"spec": {"a": 1}}  # required, as kube's validation has it
    created = api.post(collection, body, headers={"Accept": CLIENT_GO})
    assert created.status_code == 201, created.content
    assert created.headers["Content-Type"] == PROTOBUF
    created_json = as_json(created.content)
    assert created_json["kind"] == rt.kind and created_json["apiVersion"] == rt.api_version
    assert created_json["metadata"]["name"] == name

    url = f"{collection}/{name}"
    # A controller may write the object (a ReplicationController's status)
    # between two reads: compare reads of one version of it.
    for _ in range(_READS):
        got_json = api.get(url).json()
        got = api.get(url, headers={"Accept": CLIENT_GO})
        assert got.status_code == 200 and got.headers["Content-Type"] == PROTOBUF
        got_pb = as_json(got.content)
        if _version(got_pb) == _version(got_json):
            break
    assert got_pb == without_nulls(got_json)
    if _version(got_pb) == _version(created_json):
        assert created_json == got_pb

    params = {"fieldSelector": f"metadata.name={name}"}
    for _ in range(_READS):
        listed_json = api.get(collection, params=params).json()
        listed = api.get(collection, params=params, headers={"Accept": PROTOBUF})
        assert listed.status_code == 200 and listed.headers["Content-Type"] == PROTOBUF
        listed_pb = as_json(listed.content)
        if [_version(i) for i in listed_pb["items"]] == [_version(i) for i in listed_json["items"]]:
            break
    assert listed_pb["kind"] == rt.list_kind
    # Other writers may move the list's resourceVersion between the two reads.
    assert listed_pb["metadata"]["resourceVersion"]
    listed_pb["metadata"].pop("resourceVersion")
    listed_json["metadata"].pop("resourceVersion")
    assert listed_pb == list_items_without_type(without_nulls(listed_json))
    assert [item["metadata"]["name"] for item in listed_pb["items"]] == [name]

    deleted = api.delete(url, headers={"Accept": CLIENT_GO})
    assert deleted.status_code in (200, 202), deleted.content
    assert deleted.headers["Content-Type"] == PROTOBUF
    assert as_json(deleted.content)["kind"] in (rt.kind, "Status")


def test_kapi_own_kinds_answer_json(api, namespace):
    """sync.kapi.dev kinds have no protobuf message, like custom resources: a
    client-go Accept gets JSON, protobuf alone 406."""
    url = f"/apis/sync.kapi.dev/v1/namespaces/{namespace}/gitrepositories"
    r = api.get(url, headers={"Accept": CLIENT_GO})
    assert r.status_code == 200 and r.headers["Content-Type"] == "application/json"
    assert r.json()["kind"] == "GitRepositoryList"
    assert_status(api.get(url, headers={"Accept": PROTOBUF}), 406, "NotAcceptable")


def test_update_patch_and_status_answer_protobuf(api, namespace):
    """PUT, each PATCH type and the status and scale subresources answer protobuf."""
    url = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "securityContext": {},
                    "containers": [{"name": "c", "image": "nginx:1.27", "ports": [{"containerPort": 80}]}],
                },
            },
        },
    }
    assert api.post(url, body).status_code == 201
    current = api.get(f"{url}/web").json()
    current["metadata"]["labels"]["tier"] = "front"
    put = api.put(f"{url}/web", current, headers={"Accept": PROTOBUF})
    assert put.status_code == 200, put.content
    put_json = as_json(put.content)
    assert put_json["metadata"]["labels"] == {"app": "web", "tier": "front"}
    # replicas: 0 and securityContext: {} are pointers in Go: protobuf carries them.
    assert put_json["spec"]["replicas"] == 0
    assert put_json["spec"]["template"]["spec"]["securityContext"] == {}

    for content_type, patch in (
        ("application/merge-patch+json", '{"metadata":{"annotations":{"a":"1"}}}'),
        ("application/strategic-merge-patch+json", '{"metadata":{"annotations":{"b":"2"}}}'),
        ("application/json-patch+json", '[{"op":"add","path":"/metadata/annotations/c","value":"3"}]'),
    ):
        r = api.request(
            "PATCH", f"{url}/web", data=patch, headers={"Content-Type": content_type, "Accept": PROTOBUF}
        )
        assert r.status_code == 200, (content_type, r.content)
        assert r.headers["Content-Type"] == PROTOBUF
    assert as_json(r.content)["metadata"]["annotations"] == {"a": "1", "b": "2", "c": "3"}
    assert as_json(r.content) == without_nulls(api.get(f"{url}/web").json())

    applied = api.request(
        "PATCH",
        f"{url}/web",
        params={"fieldManager": "pb-test"},
        data='{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","labels":{"x":"y"}}}',
        headers={"Content-Type": "application/apply-patch+yaml", "Accept": PROTOBUF},
    )
    assert applied.status_code == 200, applied.content
    managers = [entry["manager"] for entry in as_json(applied.content)["metadata"]["managedFields"]]
    assert "pb-test" in managers

    scale = api.get(f"{url}/web/scale", headers={"Accept": PROTOBUF})
    assert scale.status_code == 200
    assert as_json(scale.content)["apiVersion"] == "autoscaling/v1"
    assert as_json(scale.content)["kind"] == "Scale"
    expected = without_nulls(api.get(f"{url}/web/scale").json())
    if expected["spec"].get("replicas") == 0:
        del expected["spec"]["replicas"]  # an omitempty int32: Go reads 0 and writes no JSON field
    assert as_json(scale.content) == expected

    status = api.get(f"{url}/web/status", headers={"Accept": PROTOBUF})
    assert status.status_code == 200 and as_json(status.content)["kind"] == "Deployment"


def test_reviews_and_token_requests_answer_protobuf(api, namespace):
    """The create-only kinds (access reviews, TokenReview, a ServiceAccount's
    TokenRequest) answer protobuf too, as kube's do."""
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "get", "resource": "pods", "namespace": namespace}},
    }
    r = api.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", review, headers={"Accept": PROTOBUF})
    assert r.status_code == 201, r.content
    answered = as_json(r.content)
    assert answered["kind"] == "SelfSubjectAccessReview" and answered["status"]["allowed"] is True

    assert api.post(f"/api/v1/namespaces/{namespace}/serviceaccounts", {"metadata": {"name": "sa"}}).status_code == 201
    token = api.post(
        f"/api/v1/namespaces/{namespace}/serviceaccounts/sa/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 600}},
        headers={"Accept": CLIENT_GO},
    )
    assert token.status_code == 201, token.content
    request = as_json(token.content)
    assert request["apiVersion"] == "authentication.k8s.io/v1" and request["kind"] == "TokenRequest"
    assert request["status"]["token"] and request["spec"]["expirationSeconds"] == 600

    tokenreview = api.post(
        "/apis/authentication.k8s.io/v1/tokenreviews",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": request["status"]["token"]}},
        headers={"Accept": PROTOBUF},
    )
    reviewed = as_json(tokenreview.content)
    assert reviewed["status"]["authenticated"] is True
    assert reviewed["status"]["user"]["username"] == f"system:serviceaccount:{namespace}:sa"


def test_errors_are_protobuf_status(api, namespace):
    """A failure for a protobuf client is a protobuf ``Status`` with kube's code and reason."""
    r = api.get(f"/api/v1/namespaces/{namespace}/configmaps/missing", headers={"Accept": CLIENT_GO})
    assert r.status_code == 404
    assert r.headers["Content-Type"] == PROTOBUF
    status = as_json(r.content)
    assert status["apiVersion"] == "v1" and status["kind"] == "Status"
    assert status["status"] == "Failure" and status["reason"] == "NotFound" and status["code"] == 404
    assert status["details"] == {"name": "missing", "kind": "configmaps"}

    body = {"metadata": {"name": "Not_Valid"}, "data": {"a": "b"}}
    r = api.post(f"/api/v1/namespaces/{namespace}/configmaps", body, headers={"Accept": PROTOBUF})
    assert r.status_code == 422
    status = as_json(r.content)
    assert status["reason"] == "Invalid" and status["details"]["causes"]

    anonymous = requests.get(
        f"{api.server.url}/api/v1/namespaces",
        headers={"Accept": PROTOBUF},
        verify=str(api.server.ca_path),
        timeout=10,
    )
    assert anonymous.status_code == 401
    assert as_json(anonymous.content)["reason"] == "Unauthorized"


def test_negotiation_follows_kube(api, namespace):
    """Order and weights pick the encoding; Table is never protobuf."""
    url = f"/api/v1/namespaces/{namespace}"
    r = api.get(url, headers={"Accept": "application/json;q=0.5, application/vnd.kubernetes.protobuf"})
    assert r.headers["Content-Type"] == PROTOBUF
    r = api.get(url, headers={"Accept": "application/json, application/vnd.kubernetes.protobuf"})
    assert r.headers["Content-Type"] == "application/json"
    r = api.get(url, headers={"Accept": f"{PROTOBUF};as=Table;g=meta.k8s.io;v=v1"})
    assert_status(r, 406, "NotAcceptable")
    r = api.get(
        url,
        headers={"Accept": f"{PROTOBUF};as=Table;g=meta.k8s.io;v=v1, application/json;as=Table;g=meta.k8s.io;v=v1"},
    )
    assert r.status_code == 200 and r.json()["kind"] == "Table"
    r = api.get("/api/v1/namespaces", headers={"Accept": f"{PROTOBUF};{POM_LIST}"})
    assert r.status_code == 200
    assert r.headers["Content-Type"] == f"{PROTOBUF};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
    pom = as_json(r.content)
    assert pom["kind"] == "PartialObjectMetadataList" and pom["apiVersion"] == "meta.k8s.io/v1"
    assert namespace in [item["metadata"]["name"] for item in pom["items"]]
    assert all(set(item) == {"metadata"} for item in pom["items"])


def test_legacy_discovery_is_protobuf(api):
    """/api, /apis, /apis/GROUP and the resource lists answer protobuf, as kube's;
    aggregated discovery stays JSON."""
    for path, kind in (
        ("/api", "APIVersions"),
        ("/apis", "APIGroupList"),
        ("/apis/apps", "APIGroup"),
        ("/api/v1", "APIResourceList"),
        ("/apis/apps/v1", "APIResourceList"),
    ):
        r = api.get(path, headers={"Accept": CLIENT_GO})
        assert r.status_code == 200 and r.headers["Content-Type"] == PROTOBUF, path
        decoded = as_json(r.content)
        assert decoded["kind"] == kind
        expected = without_nulls(api.get(path).json())
        assert decoded["apiVersion"] == expected.get("apiVersion", "")
        assert {**decoded, "apiVersion": ""} == {**expected, "apiVersion": ""}
    resources = as_json(api.get("/apis/apps/v1", headers={"Accept": PROTOBUF}).content)["resources"]
    deployments = next(r for r in resources if r["name"] == "deployments")
    assert deployments["namespaced"] is True and "watch" in deployments["verbs"]
    aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    r = api.get("/apis", headers={"Accept": f"{PROTOBUF};g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,{aggregated}"})
    assert r.headers["Content-Type"].startswith("application/json") and r.json()["kind"] == "APIGroupDiscoveryList"


@pytest.fixture(scope="module")
def widgets(api):
    schema = {"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}
    yield from served_collection(api, "pb", "widgets", "Widget", schema)


def test_custom_resources_stay_json(api, widgets):
    """A custom resource has no protobuf message: a client-go Accept gets JSON,
    protobuf only gets 406 (as JSON), and nothing is written first."""
    body = {"apiVersion": widgets.split("/")[2] + "/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"a": 1}}
    only = api.post(widgets, body, headers={"Accept": PROTOBUF})
    assert_status(only, 406, "NotAcceptable")
    assert "application/vnd.kubernetes.protobuf" in only.json()["message"]
    assert api.get(f"{widgets}/w").status_code == 404

    created = api.post(widgets, body, headers={"Accept": CLIENT_GO})
    assert created.status_code == 201
    assert created.headers["Content-Type"] == "application/json"
    assert created.json()["spec"] == {"a": 1}
    assert api.get(f"{widgets}/w", headers={"Accept": CLIENT_GO}).json()["kind"] == "Widget"
    assert_status(api.get(widgets, headers={"Accept": PROTOBUF}), 406, "NotAcceptable")

    # The metadata client (garbage collector, namespace controller) reads
    # custom resources as protobuf PartialObjectMetadata.
    r = api.get(widgets, headers={"Accept": f"{PROTOBUF};{POM_LIST},application/json"})
    assert r.status_code == 200 and r.headers["Content-Type"].startswith(PROTOBUF)
    assert [item["metadata"]["name"] for item in as_json(r.content)["items"]] == ["w"]


def test_custom_resource_definitions_are_protobuf(api, widgets):
    """The CustomResourceDefinition kind itself is built in: get and list answer
    protobuf with its whole schema."""
    group = widgets.split("/")[2]
    url = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.{group}"
    got = api.get(url, headers={"Accept": CLIENT_GO})
    assert got.status_code == 200 and got.headers["Content-Type"] == PROTOBUF
    crd = as_json(got.content)
    assert crd == without_nulls(api.get(url).json())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert schema["properties"]["spec"]["x-kubernetes-preserve-unknown-fields"] is True
    listed = api.get(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        params={"fieldSelector": f"metadata.name=widgets.{group}"},
        headers={"Accept": PROTOBUF},
    )
    assert as_json(listed.content)["kind"] == "CustomResourceDefinitionList"


def _watch(api, path: str, accept: str, params: dict, until) -> tuple[requests.Response, list[tuple[str, dict]]]:
    """Read a protobuf watch until ``until(events)`` holds."""
    response = api.session.get(
        api.server.url + path, params={"watch": "true", **params}, headers={"Accept": accept}, stream=True, timeout=30
    )
    events: list[tuple[str, dict]] = []
    buffer = b""
    try:
        for chunk in response.iter_content(chunk_size=None):
            buffer += chunk
            frames, buffer = decode_watch_frames(buffer)
            events.extend((kind, as_json(body)) for kind, body in frames)
            if until(events):
                break
    finally:
        response.close()
    return response, events


def test_watch_streams_length_delimited_protobuf_frames(api, namespace):
    """A protobuf watch sends ``WatchEvent`` frames whose objects equal the JSON objects."""
    url = f"/api/v1/namespaces/{namespace}/configmaps"
    first = api.post(url, {"metadata": {"name": "before"}, "data": {"k": "v"}}).json()
    listed = api.get(url, headers={"Accept": PROTOBUF})
    list_rv = as_json(listed.content)["metadata"]["resourceVersion"]
    later = api.post(url, {"metadata": {"name": "after"}, "data": {"k": "üß\u2028"}}).json()
    assert later["kind"] == "ConfigMap", later
    assert api.delete(f"{url}/after").status_code == 200

    response, events = _watch(
        api, url, CLIENT_GO, {"resourceVersion": list_rv, "timeoutSeconds": "20"}, lambda e: len(e) >= 2
    )
    assert response.status_code == 200
    assert response.headers["Content-Type"] == f"{PROTOBUF};stream=watch"
    assert [kind for kind, _ in events] == ["ADDED", "DELETED"]
    assert events[0][1] == without_nulls(later)
    assert events[1][1]["metadata"]["name"] == "after"

    # From the start with initial events: ADDED for what exists, then the bookmark.
    response, events = _watch(
        api,
        url,
        CLIENT_GO,
        {"sendInitialEvents": "true", "allowWatchBookmarks": "true", "resourceVersionMatch": "NotOlderThan", "timeoutSeconds": "20"},
        lambda e: any(kind == "BOOKMARK" for kind, _ in e),
    )
    # What exists: "before" and the root-CA publisher's ConfigMap.
    assert [kind for kind, _ in events] == ["ADDED", "ADDED", "BOOKMARK"]
    added = {obj["metadata"]["name"]: obj for _, obj in events[:2]}
    assert sorted(added) == ["before", ROOT_CA]
    assert added["before"] == without_nulls(first)
    bookmark = events[2][1]
    assert bookmark["kind"] == "ConfigMap"
    assert bookmark["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def test_metadata_watch_of_custom_resources_is_protobuf(api, widgets):
    """The metadata informer's watch of a custom resource: PartialObjectMetadata
    frames, bookmarks included."""
    group = widgets.split("/")[2]
    name = f"w-{uuid.uuid4().hex[:6]}"
    created = api.post(widgets, {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": name}})
    assert created.status_code == 201
    accept = f"{PROTOBUF};as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
    response, events = _watch(
        api,
        widgets,
        accept,
        {"sendInitialEvents": "true", "allowWatchBookmarks": "true", "resourceVersionMatch": "NotOlderThan", "timeoutSeconds": "20"},
        lambda e: any(kind == "BOOKMARK" for kind, _ in e),
    )
    assert response.headers["Content-Type"] == f"{PROTOBUF};stream=watch"
    added = [obj for kind, obj in events if kind == "ADDED"]
    assert name in [obj["metadata"]["name"] for obj in added]
    assert {obj["kind"] for _, obj in events} == {"PartialObjectMetadata"}
    assert events[-1][1]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


def test_a_protobuf_client_round_trips_kubectl_bodies(api, namespace):
    """kubectl's recorded protobuf bodies sent with a protobuf Accept come back as
    protobuf holding the same object."""
    body = (Path(__file__).resolve().parents[1] / "protobuf" / "fixtures" / "deployment.bin").read_bytes()
    r = api.request(
        "POST",
        f"/apis/apps/v1/namespaces/{namespace}/deployments",
        data=body,
        headers={"Content-Type": PROTOBUF, "Accept": CLIENT_GO},
    )
    assert r.status_code == 201, r.content
    sent = as_json(body)
    answered = as_json(r.content)
    assert answered["spec"]["template"]["spec"]["containers"][0]["command"] == ["nginx", "-g", "daemon off;"]
    assert answered["spec"]["replicas"] == sent["spec"]["replicas"] == 3
    assert answered["metadata"]["namespace"] == namespace
