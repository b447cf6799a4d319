"""Lists: selectors in SQL, across namespaces, pages, and option validation."""

from __future__ import annotations

import base64
import json
import uuid

from tests.api.conftest import ROOT_CA, assert_status, own


def make(api, namespace, name, labels=None, kind="configmaps", **extra):
    body = {"metadata": {"name": name, "labels": labels or {}}, **extra}
    r = api.post(f"/api/v1/namespaces/{namespace}/{kind}", body)
    assert r.status_code == 201, r.text
    return r.json()


def names(response) -> list[str]:
    """The listed names, the root-CA publisher's ConfigMap left out."""
    assert response.status_code == 200, response.text
    return [i["metadata"]["name"] for i in own(response.json()["items"])]


def test_label_selectors(api, namespace):
    make(api, namespace, "a", {"app": "web", "tier": "front"})
    make(api, namespace, "b", {"app": "web", "tier": "back"})
    make(api, namespace, "c", {"app": "db"})
    make(api, namespace, "d")
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    cases = {
        "app=web": ["a", "b"],
        "app==web": ["a", "b"],
        "app!=web": ["c", "d"],
        "app in (db, other)": ["c"],
        "app notin (web)": ["c", "d"],
        "tier": ["a", "b"],
        "!tier": ["c", "d"],
        "app=web,tier=back": ["b"],
    }
    for selector, expected in cases.items():
        assert names(api.get(base, params={"labelSelector": selector})) == expected, selector


def test_malformed_label_selector_is_bad_request(api, namespace):
    r = api.get(f"/api/v1/namespaces/{namespace}/configmaps", params={"labelSelector": "app in (a"})
    assert_status(r, 400, "BadRequest")


def test_field_selectors(api, namespace):
    make(api, namespace, "one", kind="secrets", type="Opaque")
    make(api, namespace, "two", kind="secrets", type="kubernetes.io/basic-auth")
    base = f"/api/v1/namespaces/{namespace}/secrets"
    assert names(api.get(base, params={"fieldSelector": "metadata.name=two"})) == ["two"]
    assert names(api.get(base, params={"fieldSelector": "type=Opaque"})) == ["one"]
    assert names(api.get(base, params={"fieldSelector": "type!=Opaque"})) == ["two"]
    status = assert_status(api.get(base, params={"fieldSelector": "data.a=x"}), 400, "BadRequest")
    assert "field label not supported" in status["message"]


def test_node_unschedulable_field_selector(api):
    """kube's node field set: ``spec.unschedulable`` reads "false" when unset, in
    lists (SQL) and watches (Python) alike, so "schedulable nodes" are found."""
    tag = uuid.uuid4().hex[:8]
    free, cordoned = f"free-{tag}", f"cordoned-{tag}"
    for name, spec in ((free, {}), (cordoned, {"unschedulable": True})):
        created = api.post("/api/v1/nodes", {"metadata": {"name": name}, "spec": spec})
        assert created.status_code == 201, created.text
    try:
        for value, want, other in (("false", free, cordoned), ("true", cordoned, free)):
            params = {"fieldSelector": f"spec.unschedulable={value}"}
            listed = names(api.get("/api/v1/nodes", params=params))
            assert want in listed and other not in listed
        params = {"fieldSelector": "spec.unschedulable!=true", "watch": "1", "timeoutSeconds": "1"}
        events = [json.loads(line) for line in api.get("/api/v1/nodes", params=params).iter_lines()]
        watched = {e["object"]["metadata"]["name"] for e in events}
        assert free in watched and cordoned not in watched
    finally:
        for name in (free, cordoned):
            api.delete(f"/api/v1/nodes/{name}")


def test_event_field_selectors(api, namespace):
    for name, kind in (("e1", "Pod"), ("e2", "Deployment")):
        body = {
            "metadata": {"name": name},
            "involvedObject": {"kind": kind, "name": "x", "namespace": namespace},
            "reason": "Test",
            "message": "hello",
            "type": "Normal",
        }
        assert api.post(f"/api/v1/namespaces/{namespace}/events", body).status_code == 201
    listed = api.get(f"/api/v1/namespaces/{namespace}/events", params={"fieldSelector": "involvedObject.kind=Pod"})
    assert names(listed) == ["e1"]
    # The same rows, served as events.k8s.io/v1 with its field names.
    v1 = api.get(f"/apis/events.k8s.io/v1/namespaces/{namespace}/events").json()
    by_name = {i["metadata"]["name"]: i for i in v1["items"]}
    assert by_name["e1"]["regarding"]["kind"] == "Pod" and by_name["e1"]["note"] == "hello"
    assert v1["apiVersion"] == "events.k8s.io/v1"


def test_list_across_namespaces(api, namespace):
    make(api, namespace, "everywhere", {"probe": namespace})
    r = api.get("/api/v1/configmaps", params={"labelSelector": f"probe={namespace}"})
    items = r.json()["items"]
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in items] == [(namespace, "everywhere")]


def test_pages_are_consistent_and_ordered(api, namespace):
    for i in range(7):
        make(api, namespace, f"p{i}")
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    first = api.get(base, params={"limit": 3}).json()
    # Eight objects: the seven and the root-CA publisher's ConfigMap (first in
    # name order).
    assert [i["metadata"]["name"] for i in first["items"]] == [ROOT_CA, "p0", "p1"]
    assert first["metadata"]["remainingItemCount"] == 5
    revision = first["metadata"]["resourceVersion"]
    # Changes after the first page do not show in later pages.
    api.delete(f"{base}/p4")
    make(api, namespace, "p35")
    second = api.get(base, params={"limit": 3, "continue": first["metadata"]["continue"]}).json()
    assert second["metadata"]["resourceVersion"] == revision
    assert [i["metadata"]["name"] for i in second["items"]] == ["p2", "p3", "p4"]
    third = api.get(base, params={"limit": 3, "continue": second["metadata"]["continue"]}).json()
    assert [i["metadata"]["name"] for i in third["items"]] == ["p5", "p6"]
    assert "continue" not in third["metadata"]


def test_tampered_continue_is_bad_request(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    assert_status(api.get(base, params={"continue": "garbage"}), 400, "BadRequest")
    forged = base64.urlsafe_b64encode(json.dumps({"v": "other", "rv": 1, "start": "a/b"}).encode()).decode()
    assert_status(api.get(base, params={"continue": forged}), 400, "BadRequest")


def test_invalid_list_options_are_422(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    status = assert_status(api.get(base, params={"resourceVersionMatch": "Exact"}), 422, "Invalid")
    assert status["details"]["causes"][0]["field"] == "resourceVersionMatch"
    status = assert_status(api.get(base, params={"resourceVersion": "0", "resourceVersionMatch": "Exact"}), 422, "Invalid")
    assert "forbidden for resourceVersion" in status["message"]
    assert_status(api.get(base, params={"resourceVersion": "1", "resourceVersionMatch": "Sideways"}), 422, "Invalid")
    assert_status(api.get(base, params={"resourceVersion": "abc"}), 400, "BadRequest")
    assert_status(api.get(base, params={"limit": "ten"}), 400, "BadRequest")


def test_exact_list_returns_the_past(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    make(api, namespace, "old")
    then = api.get(base).json()["metadata"]["resourceVersion"]
    api.delete(f"{base}/old")
    make(api, namespace, "new")
    past = api.get(base, params={"resourceVersion": then, "resourceVersionMatch": "Exact"})
    assert names(past) == ["old"]
    assert past.json()["metadata"]["resourceVersion"] == then
    assert names(api.get(base)) == ["new"]
