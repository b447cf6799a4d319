"""``kapi.storage.purge``: a terminating namespace's deletes asked for in bulk,
one keyset batch per statement, checked in process on PostgreSQL."""

from __future__ import annotations

import uuid

from storage.conftest import GROUP

from kapi.storage import purge
from kapi.storage.interface import Key


def _obj(name: str, namespace: str, **meta) -> dict:
    return {"apiVersion": f"{GROUP}/v1", "kind": "Widget",
            "metadata": {"name": name, "namespace": namespace, "uid": str(uuid.uuid4()), **meta}}


def _items(namespace: str) -> dict[str, tuple]:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(
            'SELECT key, "group", resource, namespace, name, argument, request_id'
            " FROM kapi_work_item WHERE controller = 'delete' AND namespace = %s",
            [namespace],
        )
        return {row[0]: row[1:] for row in cur.fetchall()}


def _forget(namespace: str) -> None:
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("DELETE FROM kapi_work_item WHERE controller = 'delete' AND namespace = %s", [namespace])


def test_every_object_not_yet_going_is_asked_for_once_across_batches(storage, resource) -> None:
    """Five objects of two collections, one already being deleted and one of a
    collection not named: batches of two ask for the other four, each once,
    with the propagation and the request; a second pass asks for none."""
    ns = f"{resource}-purged"
    mine, other, unnamed = (GROUP, resource), (GROUP, f"{resource}-b"), (GROUP, f"{resource}-c")
    uids = {}
    try:
        for collection, name in ((mine, "a"), (mine, "b"), (mine, "c"), (other, "a")):
            uids[(collection, name)] = storage.create(Key(*collection, ns, name), _obj(name, ns))["metadata"]["uid"]
        storage.create(Key(*mine, ns, "going"), _obj("going", ns, deletionTimestamp="2026-01-01T00:00:00Z"))
        storage.create(Key(*unnamed, ns, "kept"), _obj("kept", ns))
        storage.create(Key(*mine, f"{ns}-elsewhere", "z"), _obj("z", f"{ns}-elsewhere"))

        asked = purge.ask_deletes(ns, [mine, other], propagation="Foreground", request_id="req-1", batch=2)
        assert asked == 4
        items = _items(ns)
        assert set(items) == set(uids.values())
        for (collection, name), uid in uids.items():
            assert items[uid] == (*collection, ns, name, "Foreground", "req-1")
        assert purge.ask_deletes(ns, [mine, other], batch=2) == 0, "asked for already"
        assert _items(f"{ns}-elsewhere") == {}
    finally:
        _forget(ns)


def test_batches_bound_one_pass(storage, resource) -> None:
    """``batches`` statements of ``batch`` rows at most; the next pass goes on."""
    ns = f"{resource}-bounded"
    try:
        for i in range(5):
            storage.create(Key(GROUP, resource, ns, f"o{i}"), _obj(f"o{i}", ns))
        assert purge.ask_deletes(ns, [(GROUP, resource)], batch=2, batches=1) == 2
        assert purge.ask_deletes(ns, [(GROUP, resource)], batch=2, batches=1) == 2
        assert purge.ask_deletes(ns, [(GROUP, resource)], batch=2, batches=5) == 1
        assert len(_items(ns)) == 5
    finally:
        _forget(ns)
