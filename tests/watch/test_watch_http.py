"""Watch over raw HTTP: every row of the specification's watch table, invalid
option combinations, selectors, bookmarks, streaming lists and timeouts."""

from __future__ import annotations

import threading
import time

from tests.api.conftest import assert_status
from tests.watch.conftest import stream_events
from tests.watch.helpers import cm_path, create, delete, rv, summary, update


def later(delay: float, fn, *args):
    t = threading.Timer(delay, fn, args)
    t.start()
    return t


def test_unset_version_sends_state_then_changes(watch_api, watch_ns):
    """resourceVersion unset: synthetic ADDED for every current object, then
    the changes after that state, in order, each at its own version."""
    a = create(watch_api, watch_ns, "a")
    b = create(watch_api, watch_ns, "b")
    t = later(0.5, lambda: (update(watch_api, watch_ns, "a", data={"k": "1"}), delete(watch_api, watch_ns, "b")))
    events = stream_events(watch_api, cm_path(watch_ns), {}, limit=4)
    t.join()
    got = summary(events)
    assert got[:2] == [("ADDED", "a", rv(a)), ("ADDED", "b", rv(b))]
    assert [g[:2] for g in got[2:]] == [("MODIFIED", "a"), ("DELETED", "b")]
    assert got[2][2] < got[3][2]
    assert events[2]["object"]["data"] == {"k": "1"}
    # DELETED carries the last state at the delete's version.
    assert events[3]["object"]["data"] == {"k": "0"} and got[3][2] > rv(b)


def test_version_zero_starts_at_any_state(watch_api, watch_ns):
    """resourceVersion "0": synthetic ADDED for a state, then changes."""
    a = create(watch_api, watch_ns, "a")
    t = later(0.5, create, watch_api, watch_ns, "b")
    events = stream_events(watch_api, cm_path(watch_ns), {"resourceVersion": "0"}, limit=2)
    t.join()
    assert summary(events)[0] == ("ADDED", "a", rv(a))
    assert summary(events)[1][:2] == ("ADDED", "b")


def test_exact_version_starts_after_it(watch_api, watch_ns):
    """resourceVersion N: no synthetic events; exactly the changes after N."""
    create(watch_api, watch_ns, "a")
    b = create(watch_api, watch_ns, "b")
    c = update(watch_api, watch_ns, "a", data={"k": "2"})
    events = stream_events(watch_api, cm_path(watch_ns), {"resourceVersion": str(rv(b)), "timeoutSeconds": "2"})
    assert summary(events) == [("MODIFIED", "a", rv(c))]


def test_future_version_waits_for_it(watch_api, watch_ns):
    """A watch from a version not yet written gets the changes after it."""
    a = create(watch_api, watch_ns, "a")
    t = later(0.5, lambda: [create(watch_api, watch_ns, f"n{i}") for i in range(3)])
    events = stream_events(watch_api, cm_path(watch_ns), {"resourceVersion": str(rv(a) + 2)}, limit=1)
    t.join()
    assert summary(events)[0][2] > rv(a) + 2


def test_streaming_list_initial_events_then_bookmark(watch_api, watch_ns):
    """sendInitialEvents=true with NotOlderThan: ADDED for the state, a BOOKMARK
    annotated k8s.io/initial-events-end at the state's version, then changes."""
    a = create(watch_api, watch_ns, "a")
    b = create(watch_api, watch_ns, "b")
    for version in (None, "0", str(rv(b))):
        params = {"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
                  "allowWatchBookmarks": "true", "timeoutSeconds": "1"}
        if version is not None:
            params["resourceVersion"] = version
        events = stream_events(watch_api, cm_path(watch_ns), params, limit=3)
        assert [(e["type"], e["object"]["metadata"].get("name")) for e in events[:2]] == [("ADDED", "a"), ("ADDED", "b")], version
        end = events[2]
        assert end["type"] == "BOOKMARK"
        assert end["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
        assert int(end["object"]["metadata"]["resourceVersion"]) >= rv(b)
        assert end["object"]["kind"] == "ConfigMap" and end["object"]["apiVersion"] == "v1"
    del a


def test_send_initial_events_false(watch_api, watch_ns):
    """sendInitialEvents=false: no initial state; from now (unset) or from N."""
    a = create(watch_api, watch_ns, "a")
    base = {"sendInitialEvents": "false", "resourceVersionMatch": "NotOlderThan"}
    t = later(0.7, create, watch_api, watch_ns, "b")
    events = stream_events(watch_api, cm_path(watch_ns), base, limit=1)
    t.join()
    assert summary(events)[0][:2] == ("ADDED", "b")
    c = update(watch_api, watch_ns, "a", data={"k": "x"})
    events = stream_events(watch_api, cm_path(watch_ns), {**base, "resourceVersion": str(rv(a))}, limit=2)
    assert [e[1] for e in summary(events)] == ["b", "a"] and summary(events)[1][2] == rv(c)


def test_too_large_streaming_list_is_an_error_event(watch_api, watch_ns):
    """A streaming list not older than a version that never comes: ERROR 504."""
    params = {"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan", "resourceVersion": "999999999"}
    events = stream_events(watch_api, cm_path(watch_ns), params, limit=1)
    assert events[0]["type"] == "ERROR"
    assert events[0]["object"]["code"] == 504
    assert "Too large resource version" in events[0]["object"]["message"]


def test_invalid_watch_options(watch_api, watch_ns):
    """kube's validateWatchOptions: 422 Invalid naming resourceVersionMatch;
    a malformed version is 400."""
    path = cm_path(watch_ns)
    cases = [
        {"resourceVersionMatch": "NotOlderThan"},
        {"sendInitialEvents": "true"},
        {"sendInitialEvents": "true", "resourceVersionMatch": "Exact"},
        {"resourceVersionMatch": "Bogus", "sendInitialEvents": "true"},
    ]
    for params in cases:
        r = watch_api.get(path, params={"watch": "1", **params})
        status = assert_status(r, 422, "Invalid")
        assert status["details"]["causes"][0]["field"] == "resourceVersionMatch", params
    assert_status(watch_api.get(path, params={"watch": "1", "resourceVersion": "abc"}), 400, "BadRequest")


def test_selector_transitions(watch_api, watch_ns):
    """An object that starts matching arrives as ADDED, one that stops as
    DELETED (at the write's version); non-matching writes are not sent."""
    create(watch_api, watch_ns, "a", labels={"app": "x"})
    b = create(watch_api, watch_ns, "b", labels={"app": "y"})

    def writes():
        update(watch_api, watch_ns, "b", labels={"app": "x"})      # starts matching
        update(watch_api, watch_ns, "a", labels={"app": "z"})      # stops matching
        update(watch_api, watch_ns, "a", labels={"app": "w"})      # not matching: nothing
        update(watch_api, watch_ns, "b", labels={"app": "x"}, data={"k": "9"})  # still: MODIFIED
        delete(watch_api, watch_ns, "b")

    params = {"labelSelector": "app=x", "resourceVersion": str(rv(b))}
    t = later(0.3, writes)
    events = stream_events(watch_api, cm_path(watch_ns), params, limit=4)
    t.join()
    got = [(t_, n) for t_, n, _ in summary(events)]
    assert got == [("ADDED", "b"), ("DELETED", "a"), ("MODIFIED", "b"), ("DELETED", "b")]
    deleted_a = events[1]["object"]
    assert deleted_a["metadata"]["labels"] == {"app": "x"}  # its last matching state
    versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert versions == sorted(versions) and len(set(versions)) == 4


def test_field_selector_single_object_and_namespace_scope(watch_api, watch_ns):
    """fieldSelector=metadata.name=X watches one object; other namespaces'
    writes never reach a namespaced watch."""
    a = create(watch_api, watch_ns, "a")
    create(watch_api, watch_ns, "b")
    create(watch_api, "default", f"other-{watch_ns}")
    update(watch_api, watch_ns, "b", data={"k": "b"})
    c = update(watch_api, watch_ns, "a", data={"k": "a"})
    params = {"fieldSelector": "metadata.name=a", "resourceVersion": str(rv(a) - 1), "timeoutSeconds": "2"}
    events = stream_events(watch_api, cm_path(watch_ns), params)
    assert summary(events) == [("ADDED", "a", rv(a)), ("MODIFIED", "a", rv(c))]
    delete(watch_api, "default", f"other-{watch_ns}")


def test_all_namespaces_watch(watch_api, watch_ns):
    """/api/v1/configmaps?watch=1 sees writes in every namespace."""
    start = create(watch_api, watch_ns, "a")
    t = later(0.3, create, watch_api, "default", f"x-{watch_ns}")
    events = stream_events(watch_api, "/api/v1/configmaps", {"resourceVersion": str(rv(start))}, limit=1)
    t.join()
    assert summary(events)[0][:2] == ("ADDED", f"x-{watch_ns}")
    delete(watch_api, "default", f"x-{watch_ns}")


def test_bookmarks_carry_progress(watch_api, watch_ns):
    """allowWatchBookmarks=true: BOOKMARKs (kind, apiVersion and
    metadata.resourceVersion only) at the configured interval (1 s here),
    at or after the last event; none without the option."""
    a = create(watch_api, watch_ns, "a")
    params = {"resourceVersion": str(rv(a)), "allowWatchBookmarks": "true", "timeoutSeconds": "3"}
    events = stream_events(watch_api, cm_path(watch_ns), params)
    marks = [e for e in events if e["type"] == "BOOKMARK"]
    assert len(marks) >= 2
    for m in marks:
        assert set(m["object"]) == {"kind", "apiVersion", "metadata"}
        assert set(m["object"]["metadata"]) == {"resourceVersion"}
        assert int(m["object"]["metadata"]["resourceVersion"]) >= rv(a)
    events = stream_events(watch_api, cm_path(watch_ns), {"resourceVersion": str(rv(a)), "timeoutSeconds": "2"})
    assert events == []


def test_timeout_seconds_ends_the_stream(watch_api, watch_ns):
    """timeoutSeconds ends the watch cleanly (a complete chunked response)."""
    t0 = time.monotonic()
    events = stream_events(watch_api, cm_path(watch_ns), {"timeoutSeconds": "1"})
    assert events == []
    assert 0.9 <= time.monotonic() - t0 < 5


def test_watch_as_table(watch_api, watch_ns):
    """as=Table: every event carries a Table; column definitions come with the
    first event only (kube's NoHeaders after the first object)."""
    create(watch_api, watch_ns, "a")
    create(watch_api, watch_ns, "b")
    headers = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    events = stream_events(watch_api, cm_path(watch_ns), {"timeoutSeconds": "1"}, headers=headers)
    assert [e["object"]["kind"] for e in events] == ["Table", "Table"]
    assert events[0]["object"]["columnDefinitions"]
    assert not events[1]["object"]["columnDefinitions"]
    assert events[1]["object"]["rows"][0]["cells"][0] == "b"


def test_events_k8s_io_watch_is_converted(watch_api, watch_ns):
    """A watch on events.k8s.io/v1 delivers core/v1 Event writes in its own version."""
    start = create(watch_api, watch_ns, "marker")
    body = {"metadata": {"name": "e1"}, "involvedObject": {"kind": "Pod", "name": "p"},
            "reason": "Started", "message": "m", "type": "Normal"}
    t = later(0.3, lambda: watch_api.post(f"/api/v1/namespaces/{watch_ns}/events", body))
    path = f"/apis/events.k8s.io/v1/namespaces/{watch_ns}/events"
    events = stream_events(watch_api, path, {"resourceVersion": str(rv(start))}, limit=1)
    t.join()
    obj = events[0]["object"]
    assert obj["apiVersion"] == "events.k8s.io/v1" and obj["kind"] == "Event"
    assert obj["regarding"]["name"] == "p" and obj["note"] == "m"
