"""Lists served from each API process's list cache (``resourceVersion=0``,
``NotOlderThan``) are the collection exactly as the database has it at the
resourceVersion they report: creates, updates and deletes applied, scoped to
the namespace, filtered by selectors, in every encoding."""

from __future__ import annotations

import time

import yaml

from tests.api.conftest import ROOT_CA, own
from tests.api.test_list_http import make, names


def _rv(obj) -> int:
    return int(obj["metadata"]["resourceVersion"])


def cached_list(api, path, at_least: int, **params):
    """A ``resourceVersion=0`` list once the serving process has caught up
    with ``at_least`` (a cache may lag behind writes made a moment ago; it
    never shows a state that did not exist). Asked repeatedly, so every API
    process answers some of them."""
    seen = []
    for _ in range(400):
        r = api.get(path, params={"resourceVersion": "0", **params})
        assert r.status_code == 200, r.text
        if int(r.json()["metadata"]["resourceVersion"]) >= at_least:
            seen.append(r)
            if len(seen) == 4:
                return seen
        time.sleep(0.05)
    raise AssertionError(f"no list at or after {at_least}")


def exact(api, path, revision: int, **params):
    r = api.get(path, params={"resourceVersion": str(revision), "resourceVersionMatch": "Exact", **params})
    assert r.status_code == 200, r.text
    return r.json()


def test_cached_list_is_the_collection_at_its_resource_version(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    # Fill the caches before the writes, so the writes reach them as events.
    cached_list(api, base, 0)
    for name in ("a", "b", "c", "d"):
        make(api, namespace, name, {"app": "web" if name < "c" else "db"}, data={"k": name})
    patched = api.request(
        "PATCH", f"{base}/a", data='{"data":{"k":"changed"}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert patched.status_code == 200, patched.text
    assert api.delete(f"{base}/c").status_code == 200
    last = _rv(make(api, namespace, "e", data={"k": "e"}))

    for r in cached_list(api, base, last):
        body = r.json()
        revision = int(body["metadata"]["resourceVersion"])
        assert body["kind"] == "ConfigMapList" and body["apiVersion"] == "v1"
        assert body["items"] == exact(api, base, revision)["items"]
        assert names(r) == ["a", "b", "d", "e"]
        assert body["items"][0]["data"] == {"k": "changed"}


def test_cached_list_selectors_and_scope(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    make(api, namespace, "web1", {"app": "web"})
    make(api, namespace, "db1", {"app": "db"})
    last = _rv(make(api, namespace, "none"))
    for r in cached_list(api, base, last, labelSelector="app=web"):
        assert names(r) == ["web1"]
    for r in cached_list(api, base, last, labelSelector="app notin (web)"):
        assert names(r) == ["db1", "none"]
    for r in cached_list(api, base, last, fieldSelector="metadata.name!=db1"):
        assert names(r) == ["none", "web1"]
    # Across namespaces: this namespace's objects are among them, in order.
    for r in cached_list(api, "/api/v1/configmaps", last):
        mine = [i["metadata"]["name"] for i in own(r.json()["items"]) if i["metadata"]["namespace"] == namespace]
        assert mine == ["db1", "none", "web1"]


def test_not_older_than_never_answers_older(api, namespace):
    """NotOlderThan N is served at N or later, whether by the cache or the database."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    for i in range(5):
        rv = _rv(make(api, namespace, f"n{i}"))
        r = api.get(base, params={"resourceVersion": str(rv), "resourceVersionMatch": "NotOlderThan"})
        assert r.status_code == 200, r.text
        assert int(r.json()["metadata"]["resourceVersion"]) >= rv
        assert f"n{i}" in names(r)


def test_cached_list_in_yaml_table_and_pretty(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    last = _rv(make(api, namespace, "y", data={"k": "v"}))
    cached_list(api, base, last)
    r = api.get(base, params={"resourceVersion": "0"}, headers={"Accept": "application/yaml"})
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("application/yaml")
    assert [i["metadata"]["name"] for i in own(yaml.safe_load(r.text)["items"])] == ["y"]
    r = api.get(
        base, params={"resourceVersion": "0"},
        headers={"Accept": "application/json;as=Table;g=meta.k8s.io;v=v1"},
    )
    assert r.status_code == 200, r.text
    assert r.json()["kind"] == "Table"
    assert [row["cells"][0] for row in r.json()["rows"] if row["cells"][0] != ROOT_CA] == ["y"]
    r = api.get(base, params={"resourceVersion": "0", "pretty": "true"})
    assert r.status_code == 200 and "\n  " in r.text
    assert names(r) == ["y"]


def test_limit_and_continue_still_page(api, namespace):
    """A list that may be served from the cache pages with a limit. At a
    minimum version (``NotOlderThan`` the last write), not ``resourceVersion=0``:
    that may answer from a cache a moment behind, which kube allows, and the
    newest object would then simply be missing, not a page away."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    for i in range(3):
        last = make(api, namespace, f"p{i}")
    first = api.get(base, params={"resourceVersion": last["metadata"]["resourceVersion"],
                                  "resourceVersionMatch": "NotOlderThan", "limit": "2"})
    # The root-CA publisher's ConfigMap is first in name order.
    assert [i["metadata"]["name"] for i in first.json()["items"]] == [ROOT_CA, "p0"]
    token = first.json()["metadata"]["continue"]
    assert names(api.get(base, params={"limit": "2", "continue": token})) == ["p1", "p2"]


def _pod(api, namespace, name, node):
    body = {"metadata": {"name": name}, "spec": {"nodeName": node, "containers": [{"name": "c", "image": "busybox"}]}}
    r = api.post(f"/api/v1/namespaces/{namespace}/pods", body)
    assert r.status_code == 201, r.text
    return r.json()


def test_cached_field_selector_beyond_name_and_namespace(api, namespace):
    """A field selector on a field the cache does not keep apart (a Pod's
    ``spec.nodeName``) reads the whole object, and selects what the database
    selects at the same revision; one on the name reads only the entry's head."""
    base = f"/api/v1/namespaces/{namespace}/pods"
    _pod(api, namespace, "on-a", "node-a")
    cached_list(api, base, 0)
    _pod(api, namespace, "on-b", "node-b")
    last = _rv(_pod(api, namespace, "on-a-too", "node-a"))
    for selector, expected in (("spec.nodeName=node-a", ["on-a", "on-a-too"]),
                               ("spec.nodeName!=node-a", ["on-b"]),
                               ("metadata.name=on-b", ["on-b"])):
        for r in cached_list(api, base, last, fieldSelector=selector):
            assert names(r) == expected, selector
            revision = int(r.json()["metadata"]["resourceVersion"])
            assert r.json()["items"] == exact(api, base, revision, fieldSelector=selector)["items"]


def test_cached_list_of_a_converted_version(api, namespace):
    """events.k8s.io/v1 serves core Events converted (renamed fields): the
    cache converts its entries, and never changes what it keeps."""
    for name in ("e1", "e2"):
        body = {"metadata": {"name": name}, "involvedObject": {"kind": "Pod", "name": "p", "namespace": namespace},
                "reason": "Test", "message": f"hello {name}", "type": "Normal"}
        r = api.post(f"/api/v1/namespaces/{namespace}/events", body)
        assert r.status_code == 201, r.text
        last = _rv(r.json())
    base = f"/apis/events.k8s.io/v1/namespaces/{namespace}/events"
    for r in cached_list(api, base, last):
        body = r.json()
        assert body["apiVersion"] == "events.k8s.io/v1"
        assert [(i["note"], i["regarding"]["name"]) for i in body["items"]] == [("hello e1", "p"), ("hello e2", "p")]
        assert body["items"] == exact(api, base, int(body["metadata"]["resourceVersion"]))["items"]
    # The core view of the same objects has the stored field names.
    for r in cached_list(api, f"/api/v1/namespaces/{namespace}/events", last):
        assert [i["message"] for i in r.json()["items"]] == ["hello e1", "hello e2"]
