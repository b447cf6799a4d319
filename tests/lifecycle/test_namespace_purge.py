"""A namespace's content is deleted in groups of short transactions (issue #20);
what clients see is unchanged: every object goes, each with one DELETED watch
event, in resourceVersion order, and an object with a finalizer is only marked."""

from __future__ import annotations

from tests.api.conftest import own, wait_for_root_ca
from tests.lifecycle.conftest import cm, gone, wait_for
from tests.watch.conftest import stream_events

PLAIN = 160  # several groups (runner.GROUP is 50)


def test_purge_deletes_everything_with_one_event_each_in_order(api):
    ns = "lc-purge-order"
    assert api.post("/api/v1/namespaces", {"metadata": {"name": ns}}).status_code == 201
    wait_for_root_ca(api, ns)
    base = f"/api/v1/namespaces/{ns}/configmaps"
    for i in range(PLAIN):
        assert api.post(base, cm(f"c{i:03d}")).status_code == 201
        if i == PLAIN // 2:
            held = api.post(base, cm("held", finalizers=["example.com/hold"]))
            assert held.status_code == 201
    listed = api.get(base).json()
    assert len(own(listed["items"])) == PLAIN + 1
    assert api.delete(f"/api/v1/namespaces/{ns}").status_code == 200

    deleted: set[str] = set()
    held_marked: list[dict] = []

    def done(event: dict) -> bool:
        name = event["object"]["metadata"].get("name")
        if event["type"] == "DELETED":
            deleted.add(name)
        elif name == "held":
            held_marked.append(event)
        return len(deleted) == PLAIN and bool(held_marked)

    events = stream_events(
        api,
        base,
        {"resourceVersion": listed["metadata"]["resourceVersion"], "timeoutSeconds": "120"},
        until=done,
        timeout=120,
    )
    changes = [e for e in events if e["type"] != "BOOKMARK"]
    versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in changes]
    assert versions == sorted(versions) and len(set(versions)) == len(versions)
    names = [e["object"]["metadata"]["name"] for e in changes if e["type"] == "DELETED"]
    assert sorted(names) == [f"c{i:03d}" for i in range(PLAIN)]  # each exactly once
    # The held object is marked (deletionTimestamp), not deleted, and holds the namespace.
    marked = [e for e in changes if e["object"]["metadata"]["name"] == "held"]
    assert [e["type"] for e in marked] == ["MODIFIED"]
    assert "deletionTimestamp" in marked[0]["object"]["metadata"]
    rest = api.get(base).json()["items"]
    assert [i["metadata"]["name"] for i in rest] == ["held"]
    assert api.get(f"/api/v1/namespaces/{ns}").status_code == 200

    obj = rest[0]
    obj["metadata"]["finalizers"] = []
    assert api.put(f"{base}/held", obj).status_code == 200
    wait_for(lambda: gone(api, f"/api/v1/namespaces/{ns}"), timeout=60, what="namespace gone")
