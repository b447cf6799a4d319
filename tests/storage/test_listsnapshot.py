"""Snapshots of the list cache answer a page exactly as PostgreSQL lists it at
the snapshot's revision: same items, same order, same continuation key and
remaining count, for every scope, selector and page size; the snapshot LRU is
bounded in number and in idle time."""

from __future__ import annotations

import uuid

from storage.conftest import GROUP

from kapi.selectors import parse_field_selector, parse_label_selector
from kapi.storage.interface import Key, ListQuery
from kapi.storage.listcache import Store, entry_matcher
from kapi.storage.listsnapshot import Snapshot, SnapshotCache

LABELS = ["", "app=web", "app!=web", "app in (web,db)", "app notin (web)", "tier", "!tier", "n>5", "n<3", "app=web,tier=front"]
FIELDS = ["", "metadata.name=o3", "metadata.name!=o3", "metadata.namespace=ns1", "spec.flag=true", "spec.flag!=true"]
SUPPORTED = {f: f for f in ("metadata.name", "metadata.namespace", "spec.flag")}


def _obj(name: str, namespace: str, i: int) -> dict:
    labels = {"app": ("web", "db", "cache")[i % 3], "n": str(i)}
    if i % 2:
        labels["tier"] = "front"
    return {"metadata": {"name": name, "namespace": namespace, "uid": str(uuid.uuid4()), "labels": labels},
            "spec": {"flag": i % 4 == 0}}


def _names(items) -> list[tuple[str, str]]:
    return [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in items]


def _walk_database(storage, resource, revision, namespace, limit, labels, fields):
    counting = labels is None and fields is None
    pages, after = [], None
    while True:
        page = storage.list(ListQuery(GROUP, resource, namespace=namespace, labels=labels, fields=fields,
                                      limit=limit, after=after, at_revision=revision, count_remaining=counting))
        pages.append((_names(page.items), page.last_key, page.remaining))
        if page.last_key is None:
            return pages
        after = page.last_key


def _walk_snapshot(snapshot: Snapshot, namespace, limit, labels, fields):
    counting = labels is None and fields is None
    matches = entry_matcher(labels, fields)
    pages, after = [], None
    while True:
        page = snapshot.page(namespace, after, limit, matches, counting)
        pages.append((_names(e.stored for e in page.entries), page.last_key, page.remaining))
        if page.last_key is None:
            return pages
        after = page.last_key


def test_snapshot_pages_equal_the_database_at_its_revision(storage, resource) -> None:
    for i in range(12):
        storage.create(Key(GROUP, resource, f"ns{i % 3}", f"o{i}"), _obj(f"o{i}", f"ns{i % 3}", i))
    store = Store()
    store.fill(storage.list_encoded(ListQuery(GROUP, resource)))
    snapshot = store.snapshot()
    # The database moves on; the snapshot stays the collection at its revision.
    storage.create(Key(GROUP, resource, "ns1", "o1a"), _obj("o1a", "ns1", 5))
    gone = storage.get(Key(GROUP, resource, "ns2", "o5"))
    storage.delete(Key(GROUP, resource, "ns2", "o5"), int(gone["metadata"]["resourceVersion"]))

    compared = 0
    for label_text in LABELS:
        for field_text in FIELDS:
            labels = parse_label_selector(label_text) if label_text else None
            fields = parse_field_selector(field_text, SUPPORTED) if field_text else None
            for namespace in (None, "ns1", "nsX"):
                for limit in (None, 1, 2, 5, 50):
                    expected = _walk_database(storage, resource, snapshot.revision, namespace, limit, labels, fields)
                    got = _walk_snapshot(snapshot, namespace, limit, labels, fields)
                    assert got == expected, (label_text, field_text, namespace, limit)
                    compared += 1
    assert compared == len(LABELS) * len(FIELDS) * 3 * 5


def test_a_snapshot_is_made_again_only_after_a_change(storage, resource) -> None:
    """A store that only moved to a newer revision shares its keys and entries;
    a change gives a new snapshot, and the old one keeps its objects."""
    storage.create(Key(GROUP, resource, "ns", "a"), _obj("a", "ns", 1))
    store = Store()
    store.fill(storage.list_encoded(ListQuery(GROUP, resource)))
    first = store.snapshot()
    store.apply([], first.revision + 5)
    moved = store.snapshot()
    assert moved.revision == first.revision + 5 and moved.entries is first.entries
    # Nothing changed from the fill to now: the snapshot is the collection at each of those revisions.
    assert moved.covers(first.revision) and moved.covers(first.revision + 5)
    assert not moved.covers(first.revision - 1) and not moved.covers(first.revision + 6)
    store.objects.pop(("ns", "a"))
    store._sorted = None
    store._snapshot = None
    assert store.snapshot().keys == () and [e.stored["metadata"]["name"] for e in first.entries] == ["a"]


def _snapshot(revision: int) -> Snapshot:
    return Snapshot(revision, (), ())


def test_the_snapshot_cache_keeps_the_most_recently_used_few() -> None:
    cache = SnapshotCache(capacity=2, ttl=60)
    for revision in (1, 2):
        cache.put("cm", _snapshot(revision))
    assert cache.get("cm", 1).revision == 1  # used: now the newest
    cache.put("cm", _snapshot(3))
    assert cache.get("cm", 2) is None
    assert cache.get("cm", 1) is not None and cache.get("cm", 3) is not None
    assert cache.get("secrets", 3) is None and len(cache) == 2


def test_the_snapshot_cache_forgets_what_was_not_used_for_its_ttl() -> None:
    now = [100.0]
    cache = SnapshotCache(capacity=8, ttl=60, clock=lambda: now[0])
    cache.put("cm", _snapshot(1))
    cache.put("cm", _snapshot(2))
    now[0] = 150.0
    assert cache.get("cm", 2) is not None  # used at 150: lives until 210
    now[0] = 200.0
    assert cache.get("cm", 1) is None
    assert cache.get("cm", 2) is not None
    now[0] = 261.0
    assert cache.get("cm", 2) is None and len(cache) == 0


def test_no_snapshots_are_kept_with_capacity_zero() -> None:
    cache = SnapshotCache(capacity=0, ttl=60)
    cache.put("cm", _snapshot(1))
    assert cache.get("cm", 1) is None
