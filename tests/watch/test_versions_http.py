"""resourceVersion semantics for get and list (the specification's tables),
chunked lists with consistent snapshots, and the 410 paths after compaction."""

from __future__ import annotations

import base64
import json
import time

from tests.api.conftest import assert_status
from tests.watch.conftest import stream_events
from tests.watch.helpers import (
    ROOT_CA,
    cm_path,
    create,
    delete,
    own,
    rv,
    update,
    wait_compacted,
)


def names(r) -> list[str]:
    """The listed names, the root-CA publisher's ConfigMap left out."""
    assert r.status_code == 200, r.text
    return [i["metadata"]["name"] for i in own(r.json()["items"])]


def test_get_resource_versions(watch_api, watch_ns):
    """get: unset → most recent; "0" → any; N → not older than N; a version
    not yet reached → 504 Timeout "Too large resource version" after waiting."""
    a = create(watch_api, watch_ns, "a")
    b = update(watch_api, watch_ns, "a", data={"k": "1"})
    path = cm_path(watch_ns, "a")
    for params in ({}, {"resourceVersion": "0"}, {"resourceVersion": str(rv(a))}, {"resourceVersion": str(rv(b))}):
        r = watch_api.get(path, params=params)
        assert r.status_code == 200 and rv(r.json()) == rv(b), params
    t0 = time.monotonic()
    r = watch_api.get(path, params={"resourceVersion": str(rv(b) + 10**9)})
    status = assert_status(r, 504, "Timeout")
    assert "Too large resource version" in status["message"]
    assert time.monotonic() - t0 >= 2.5


def test_list_resource_versions(watch_api, watch_ns):
    """list: unset → most recent; "0" → any; N (NotOlderThan) → at least N;
    N Exact → the collection as it stood at N."""
    a = create(watch_api, watch_ns, "a")
    b = create(watch_api, watch_ns, "b")
    update(watch_api, watch_ns, "a", data={"k": "new"})
    delete(watch_api, watch_ns, "b")
    c = create(watch_api, watch_ns, "c")
    path = cm_path(watch_ns)
    for params in ({}, {"resourceVersion": "0"}, {"resourceVersion": str(rv(a)), "resourceVersionMatch": "NotOlderThan"},
                   {"resourceVersion": str(rv(a))}):
        r = watch_api.get(path, params=params)
        assert names(r) == ["a", "c"], params
        assert int(r.json()["metadata"]["resourceVersion"]) >= rv(c)
    r = watch_api.get(path, params={"resourceVersion": str(rv(b)), "resourceVersionMatch": "Exact"})
    assert names(r) == ["a", "b"]
    assert r.json()["metadata"]["resourceVersion"] == str(rv(b))
    assert r.json()["items"][0]["data"] == {"k": "0"} and rv(r.json()["items"][0]) == rv(a)
    r = watch_api.get(path, params={"resourceVersion": str(rv(a)), "resourceVersionMatch": "Exact"})
    assert names(r) == ["a"]
    r = watch_api.get(path, params={"resourceVersion": str(rv(c) + 10**9), "resourceVersionMatch": "NotOlderThan"})
    assert_status(r, 504, "Timeout")


def test_list_with_limit_and_resource_version_is_exact(watch_api, watch_ns):
    """The table's second row: limit=n with resourceVersion N and no
    resourceVersionMatch is Exact (not "not older than"); with "0" it is Any;
    a version not reached yet is 504 "Too large resource version"."""
    a = create(watch_api, watch_ns, "a")
    create(watch_api, watch_ns, "b")
    latest = update(watch_api, watch_ns, "a", data={"k": "new"})
    path = cm_path(watch_ns)
    r = watch_api.get(path, params={"limit": "5", "resourceVersion": str(rv(a))})
    assert names(r) == ["a"]
    assert r.json()["metadata"]["resourceVersion"] == str(rv(a))
    assert r.json()["items"][0]["data"] == {"k": "0"}
    r = watch_api.get(path, params={"limit": "1", "resourceVersion": str(rv(a))})
    page = r.json()
    assert names(r) == ["a"]
    # At rv(a) the namespace held "a" and the root-CA publisher's ConfigMap
    # (after "a" in name order), not "b": one more page, then none.
    r = watch_api.get(path, params={"limit": "1", "continue": page["metadata"]["continue"]})
    page = r.json()
    assert [i["metadata"]["name"] for i in page["items"]] == [ROOT_CA]
    assert page["metadata"]["resourceVersion"] == str(rv(a)) and "continue" not in page["metadata"]
    # "0" is Any: a process's cache may answer a moment behind the last write
    # (never with a state that did not exist), so ask until it has caught up.
    for _ in range(200):
        r = watch_api.get(path, params={"limit": "5", "resourceVersion": "0"})
        if int(r.json()["metadata"]["resourceVersion"]) >= rv(latest):
            break
        time.sleep(0.05)
    assert names(r) == ["a", "b"]
    assert r.json()["items"][0]["data"] == {"k": "new"}
    r = watch_api.get(path, params={"limit": "5", "resourceVersion": str(rv(latest) + 10**9)})
    assert_status(r, 504, "Timeout")


def test_list_invalid_combinations(watch_api, watch_ns):
    """Invalid list options: 422 naming the parameter; bad versions 400."""
    path = cm_path(watch_ns)
    create(watch_api, watch_ns, "a")
    create(watch_api, watch_ns, "b")
    token = watch_api.get(path, params={"limit": "1"}).json()["metadata"]["continue"]
    cases = [
        ({"resourceVersionMatch": "Exact"}, "resourceVersionMatch"),
        ({"resourceVersionMatch": "Bogus", "resourceVersion": "1"}, "resourceVersionMatch"),
        ({"resourceVersionMatch": "Exact", "resourceVersion": "0"}, "resourceVersionMatch"),
        ({"resourceVersionMatch": "NotOlderThan", "resourceVersion": "1", "continue": token}, "resourceVersionMatch"),
        ({"sendInitialEvents": "true"}, "sendInitialEvents"),
    ]
    for params, field in cases:
        status = assert_status(watch_api.get(path, params=params), 422, "Invalid")
        assert field in [c.get("field") for c in status["details"]["causes"]], params
    assert_status(watch_api.get(path, params={"resourceVersion": "x"}), 400, "BadRequest")


def test_chunked_list_is_a_consistent_snapshot(watch_api, watch_ns):
    """limit/continue: every page at the first page's resourceVersion; writes
    after the first page do not show; remainingItemCount counts down; items in
    name order."""
    for i in range(7):
        create(watch_api, watch_ns, f"o{i}")
    path = cm_path(watch_ns)
    first = watch_api.get(path, params={"limit": "3"}).json()
    version = first["metadata"]["resourceVersion"]
    # Eight objects: the seven and the root-CA publisher's ConfigMap (first in
    # name order).
    assert first["metadata"]["remainingItemCount"] == 5
    # Writes after the first page.
    create(watch_api, watch_ns, "o9")
    delete(watch_api, watch_ns, "o5")
    update(watch_api, watch_ns, "o4", data={"k": "changed"})
    seen = [i["metadata"]["name"] for i in first["items"]]
    token = first["metadata"]["continue"]
    remaining = []
    while token:
        page = watch_api.get(path, params={"limit": "3", "continue": token}).json()
        assert page["metadata"]["resourceVersion"] == version
        remaining.append(page["metadata"].get("remainingItemCount"))
        seen += [i["metadata"]["name"] for i in page["items"]]
        for item in own(page["items"]):
            assert item["data"] == {"k": "0"}
        token = page["metadata"].get("continue")
    assert seen == [ROOT_CA] + [f"o{i}" for i in range(7)]
    assert remaining == [2, None]


def test_tampered_continue_is_bad_request(watch_api, watch_ns):
    path = cm_path(watch_ns)
    for bad in ("not-base64!!", base64.urlsafe_b64encode(b'{"v":"x"}').decode(),
                base64.urlsafe_b64encode(json.dumps({"v": "meta.k8s.io/v1", "rv": "x", "start": "a/"}).encode()).decode()):
        assert_status(watch_api.get(path, params={"limit": "1", "continue": bad}), 400, "BadRequest")


def test_compaction_gives_410(watch_api, watch_ns, db):
    """After the beat task compacts past a version (window 10 s here): a watch
    from it gets an ERROR event with a 410 Expired Status; an exact list gets
    410 Expired; an old continue token gets 410 Expired with a fresh token
    that lists the rest at the latest version; newer versions still work."""
    # Named to sort before the root-CA publisher's ConfigMap: the first page
    # is a0 and a1.
    for i in range(4):
        create(watch_api, watch_ns, f"a{i}")
    first = watch_api.get(cm_path(watch_ns), params={"limit": "2"}).json()
    old = int(first["metadata"]["resourceVersion"])
    update(watch_api, watch_ns, "a0", data={"k": "x"})
    compacted = wait_compacted(db, old)
    # Every watch from before the compaction: of the resource written since, of
    # one not written at all in the window, across all namespaces.
    for path in (cm_path(watch_ns), f"/api/v1/namespaces/{watch_ns}/secrets", "/api/v1/configmaps"):
        events = stream_events(watch_api, path, {"resourceVersion": str(old)}, limit=1)
        assert events[0]["type"] == "ERROR", path
        status = events[0]["object"]
        assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Expired")
        assert status["message"].startswith(f"too old resource version: {old}")
    r = watch_api.get(cm_path(watch_ns), params={"limit": "2", "resourceVersion": str(old)})
    assert_status(r, 410, "Expired")
    r = watch_api.get(cm_path(watch_ns), params={"resourceVersion": str(old), "resourceVersionMatch": "Exact"})
    assert_status(r, 410, "Expired")
    r = watch_api.get(cm_path(watch_ns), params={"limit": "2", "continue": first["metadata"]["continue"]})
    status = assert_status(r, 410, "Expired")
    fresh = status["metadata"]["continue"]
    rest = watch_api.get(cm_path(watch_ns), params={"limit": "2", "continue": fresh})
    assert names(rest) == ["a2", "a3"]
    # At or after the compacted revision, history is still there.
    r = watch_api.get(cm_path(watch_ns), params={"resourceVersion": str(compacted), "resourceVersionMatch": "Exact"})
    assert r.status_code == 200
    events = stream_events(watch_api, cm_path(watch_ns), {"resourceVersion": str(compacted), "timeoutSeconds": "1"})
    assert all(e["type"] != "ERROR" for e in events)
