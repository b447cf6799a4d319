"""Background work does not hold what consistent reads need (issue #20).

* The horizon (``kapi_rv_horizon()``) waits for transactions that took a
  resourceVersion, and for no other: an open transaction that wrote anything
  else (the lifecycle's work table, compaction, an operator's session) does
  not hold back lists, watches or the horizon; an open writer still does.
* Compaction, done in many short steps, leaves exactly what a list at the
  compacted revision or later needs: per key its newest change at or below
  the marker unless that is a deletion, and nothing superseded or deleted.
"""

from __future__ import annotations

import json
import threading
import time

import psycopg
import pytest

from tests.watch.conftest import database_url, iter_lines
from tests.watch.helpers import (
    ROOT_CA,
    cm_path,
    create,
    delete,
    own,
    rv,
    summary,
    update,
    wait_compacted,
)


@pytest.fixture
def other(watch_server):
    """A second connection, for a transaction left open during the test."""
    with psycopg.connect(database_url(watch_server)) as conn:
        yield conn
        conn.rollback()


def test_open_transaction_without_version_does_not_hold_reads(watch_api, watch_ns, db, other):
    """A transaction holding a transaction id, but no resourceVersion, stays
    open: writes and consistent lists answer, and the horizon passes them."""
    other.execute("SELECT pg_current_xact_id()")  # an xid, and no version
    other.execute("SELECT 1 FROM kapi_compaction WHERE id = 1 FOR UPDATE")  # as compaction did
    made = create(watch_api, watch_ns, "a")
    r = watch_api.get(cm_path(watch_ns))
    assert r.status_code == 200, r.text
    assert [i["metadata"]["name"] for i in own(r.json()["items"])] == ["a"]
    assert int(r.json()["metadata"]["resourceVersion"]) >= rv(made)
    (horizon,) = db.execute("SELECT kapi_rv_horizon(5000)").fetchone()
    assert horizon >= rv(made)


def test_open_writer_holds_the_horizon(db, other):
    """A transaction that took a resourceVersion and has not ended holds the
    horizon below it (the horizon gives up with 57014 QueryCanceled); once it
    ends, the horizon passes its version."""
    (version,) = other.execute("SELECT kapi_next_rv()").fetchone()
    with pytest.raises(psycopg.errors.QueryCanceled):
        db.execute("SELECT kapi_rv_horizon(300)")
    other.rollback()
    (horizon,) = db.execute("SELECT kapi_rv_horizon(5000)").fetchone()
    assert horizon >= version


def test_open_writer_holds_the_watch_stream_behind_it(watch_api, watch_ns, other):
    """A write made after a version taken by a transaction still open reaches
    no watcher until that transaction ends (the listener's horizon stays below
    it), then does, once."""
    first = create(watch_api, watch_ns, "a")
    events: list[dict] = []

    def watch() -> None:
        params = {"watch": "1", "resourceVersion": str(rv(first)), "timeoutSeconds": "30"}
        with watch_api.session.get(watch_api.server.url + cm_path(watch_ns), params=params,
                                   stream=True, timeout=30) as response:
            for line in iter_lines(response):
                events.append(json.loads(line))
                if events[-1]["object"]["metadata"].get("name") == "b":
                    return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    # The watch is live (past any catch-up from the database) once it has
    # seen a write made after it started.
    seen = create(watch_api, watch_ns, "seen")
    deadline = time.monotonic() + 20
    while not events and time.monotonic() < deadline:
        time.sleep(0.02)
    assert summary(events) == [("ADDED", "seen", rv(seen))]
    (held,) = other.execute("SELECT kapi_next_rv()").fetchone()
    later = create(watch_api, watch_ns, "b")
    assert rv(later) > held
    watcher.join(1.5)
    assert watcher.is_alive() and len(events) == 1, events
    other.rollback()
    watcher.join(20)
    assert summary(events) == [("ADDED", "seen", rv(seen)), ("ADDED", "b", rv(later))]


def _history(watch_api, db, ns: str) -> dict[str, list[tuple[int, str]]]:
    """Creates, updates, deletes and re-creates 40 ConfigMaps; returns each
    name's writes as (resourceVersion, change type), in order."""
    writes: dict[str, list[tuple[int, str]]] = {}
    for i in range(40):
        name = f"k{i:02d}"
        writes[name] = [(rv(create(watch_api, ns, name)), "ADDED")]
        for n in range(i % 3):
            writes[name].append((rv(update(watch_api, ns, name, data={"n": str(n)})), "MODIFIED"))
    for i in range(0, 40, 4):
        name = f"k{i:02d}"
        delete(watch_api, ns, name)
        (gone,) = [e[:2] for e in _rows(db, ns, name) if e[1] == "DELETED"][-1:]
        writes[name].append(gone)
    for i in range(0, 40, 8):
        name = f"k{i:02d}"
        writes[name].append((rv(create(watch_api, ns, name)), "ADDED"))
    return writes


def _rows(db, ns: str, name: str | None = None) -> list[tuple]:
    """The namespace's ConfigMap changes, the root-CA publisher's left out."""
    sql = (
        "SELECT resource_version, type, name FROM kapi_change"
        " WHERE \"group\" = '' AND resource = 'configmaps' AND namespace = %s AND name <> %s"
    )
    params: list = [ns, ROOT_CA]
    if name is not None:
        sql += " AND name = %s"
        params.append(name)
    return [(int(v), t, n) for v, t, n in db.execute(sql + " ORDER BY resource_version", params)]


def test_compaction_in_steps_keeps_what_lists_need(watch_api, watch_ns, db):
    """After compaction passes 40 keys' creates, updates, deletes and
    re-creates (many steps of 16 changes here): each live key keeps exactly its
    last change, deleted keys keep nothing, and a list at the compacted
    revision shows the live keys with their last versions."""
    writes = _history(watch_api, db, watch_ns)
    last = max(v for changes in writes.values() for v, _ in changes)
    # The marker passes ``last`` only once something is written after it.
    create(watch_api, "default", f"after-{watch_ns}")
    compacted = wait_compacted(db, last)
    delete(watch_api, "default", f"after-{watch_ns}")
    kept = {(n, v, t) for v, t, n in _rows(db, watch_ns)}
    expected = {
        (name, *changes[-1])
        for name, changes in writes.items()
        if changes[-1][1] != "DELETED"
    }
    assert kept == expected
    r = watch_api.get(
        cm_path(watch_ns),
        params={"resourceVersion": str(compacted), "resourceVersionMatch": "Exact"},
    )
    if r.status_code == 410:  # compacted further meanwhile: a list now says the same
        r = watch_api.get(cm_path(watch_ns))
    assert r.status_code == 200, r.text
    listed = {(i["metadata"]["name"], rv(i)) for i in own(r.json()["items"])}
    assert listed == {(name, v) for name, v, _ in expected}
