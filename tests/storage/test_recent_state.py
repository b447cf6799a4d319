"""Writes that start from a recent state instead of reading the row.

``Storage.guaranteed_update`` first tries ``Storage.recent`` (in the server:
the change this process's watch cache last read of the object), as kube's
GuaranteedUpdate starts from its cacher's copy. The state may be stale; these
tests hold what makes that safe: a stale state is never written over a newer
one, an answer computed from it is decided again on the stored state, and a
current one saves the read. The watch cache's side (``Channel.latest``) is at
the end.
"""

from __future__ import annotations

import pytest
from storage.conftest import GROUP, on_loop, revision, start_cache, stop_cache, widget

from kapi.objcopy import deep_copy
from kapi.storage.changes import ChangeEvent
from kapi.storage.errors import KeyNotFound, ResourceVersionConflict
from kapi.storage.interface import Key, Preconditions
from kapi.storage.postgres import PostgresStorage
from kapi.storage.watchcache import Channel


class _Recalled(PostgresStorage):
    """The server's storage, with ``recent`` answering a given state, and
    counting the reads of the row."""

    def __init__(self, state: dict | None) -> None:
        self.state = state
        self.reads = 0

    def recent(self, key: Key) -> dict | None:
        return None if self.state is None else deep_copy(self.state)

    def get(self, key: Key) -> dict:
        self.reads += 1
        return super().get(key)


def _counter(storage, resource: str) -> tuple[Key, dict, dict]:
    """An object written twice: its first and its current state."""
    key = Key(GROUP, resource, "ns", "c")
    first = storage.create(key, widget("c", "ns", spec={"count": 1}))
    second = storage.update(key, {**first, "spec": {"count": 2}}, revision(first))
    return key, first, second


def _add_one(current: dict) -> dict:
    current["spec"] = {"count": current["spec"]["count"] + 1}
    return current


def test_a_current_recent_state_saves_the_read(storage, resource) -> None:
    key, _, second = _counter(storage, resource)
    recalled = _Recalled(second)
    written = recalled.guaranteed_update(key, _add_one)
    assert written["spec"] == {"count": 3}
    assert recalled.reads == 0
    assert storage.get(key)["spec"] == {"count": 3}


def test_a_stale_recent_state_is_not_written_over_the_newer_one(storage, resource) -> None:
    key, first, _ = _counter(storage, resource)
    recalled = _Recalled(first)
    seen = []

    def add_one(current: dict) -> dict:
        seen.append(current["spec"]["count"])
        return _add_one(current)

    assert recalled.guaranteed_update(key, add_one)["spec"] == {"count": 3}
    assert seen == [1, 2]  # computed again on the stored state
    assert storage.get(key)["spec"] == {"count": 3}


def test_an_error_from_a_stale_state_is_decided_again_on_the_stored_one(storage, resource) -> None:
    """E.g. a PUT whose resourceVersion is newer than the process has read yet."""
    key, first, second = _counter(storage, resource)

    def only_at_two(current: dict) -> dict:
        if current["spec"]["count"] != 2:
            raise ValueError("not at two")
        return _add_one(current)

    recalled = _Recalled(first)
    assert recalled.guaranteed_update(key, only_at_two)["spec"] == {"count": 3}
    fresh_precondition = Preconditions(resource_version=str(revision(storage.get(key))))
    recalled.state = second  # stale again
    assert recalled.guaranteed_update(key, _add_one, fresh_precondition)["spec"] == {"count": 4}


def test_an_error_from_a_current_state_is_checked_with_one_read(storage, resource) -> None:
    key, first, second = _counter(storage, resource)
    recalled = _Recalled(second)
    with pytest.raises(ValueError, match="refused"):
        recalled.guaranteed_update(key, lambda current: (_ for _ in ()).throw(ValueError("refused")))
    assert recalled.reads == 1
    with pytest.raises(ResourceVersionConflict):  # the client's version is the old one
        recalled.guaranteed_update(key, _add_one, Preconditions(resource_version=str(revision(first))))
    assert storage.get(key)["spec"] == {"count": 2}


def test_a_recent_state_of_a_deleted_object_is_not_found(storage, resource) -> None:
    key, _, second = _counter(storage, resource)
    storage.delete(key, revision(second))
    with pytest.raises(KeyNotFound):
        _Recalled(second).guaranteed_update(key, _add_one)
    with pytest.raises(KeyNotFound):
        storage.get(key)


def test_the_server_starts_a_write_from_its_watch_cache(storage, resource, loop, monkeypatch) -> None:
    """In an API process the recent state is the change the watch cache last
    read of the object, for the collections it follows; other writes read."""
    import os

    from kapi.storage import watchcache

    cache = watchcache.WatchCache(poll_interval=0.05)
    monkeypatch.setitem(watchcache._caches, os.getpid(), cache)
    start_cache(loop, cache)
    try:
        on_loop(loop, lambda: cache.channel(GROUP, resource))
        key, _, second = _counter(storage, resource)
        assert cache.wait_for_revision(revision(second), timeout=10)
        counting = _Recalled(None)
        counting.recent = lambda key: PostgresStorage.recent(counting, key)
        assert counting.recent(key) == second
        third = counting.guaranteed_update(key, _add_one)
        assert third["spec"] == {"count": 3} and counting.reads == 0
        # A collection the process does not follow yet: the first update
        # reads the row, and the listener follows the collection from then on.
        other = Key(GROUP, f"{resource}-unfollowed", "ns", "o")
        storage.create(other, widget("o", "ns", spec={"count": 0}))
        first = counting.guaranteed_update(other, _add_one)
        assert first["spec"] == {"count": 1} and counting.reads == 1
        assert on_loop(loop, lambda: (GROUP, other.resource) in cache.channels)
        second = counting.guaranteed_update(other, _add_one)
        reads = counting.reads  # 1 or 2: the listener may not have read the first yet
        assert cache.wait_for_revision(revision(second), timeout=10)
        assert counting.guaranteed_update(other, _add_one)["spec"] == {"count": 3}
        assert counting.reads == reads
        # Deleted: nothing recent, and the write finds nothing.
        deleted = storage.delete(key, revision(third))
        assert cache.wait_for_revision(revision(deleted), timeout=10)
        assert counting.recent(key) is None
        with pytest.raises(KeyNotFound):
            counting.guaranteed_update(key, _add_one)
    finally:
        stop_cache(loop, cache)


def _event(rv: int, name: str, type: str = "MODIFIED", namespace: str = "ns") -> ChangeEvent:
    return ChangeEvent(rv, GROUP, "widgets", namespace, name, type, b'{"metadata": {}}', None)


def test_a_channel_keeps_the_newest_event_of_each_object_it_holds() -> None:
    channel = Channel(floor=0, capacity=4)
    a1, b2, a3 = _event(1, "a", "ADDED"), _event(2, "b", "ADDED"), _event(3, "a")
    channel.publish([a1, b2, a3])
    assert channel.latest == {("ns", "a"): a3, ("ns", "b"): b2}
    channel.publish([_event(4, "b", "DELETED")])
    assert channel.latest == {("ns", "a"): a3}
    # Trimmed events leave the index with them (it holds nothing of its own).
    channel.publish([_event(5, "c", "ADDED"), _event(6, "d", "ADDED")])
    assert channel.offset == 2 and set(channel.latest) == {("ns", "a"), ("ns", "c"), ("ns", "d")}
    channel.publish([_event(7, "e", "ADDED"), _event(8, "f", "ADDED"), _event(9, "g", "ADDED")])
    assert set(channel.latest) == {("ns", n) for n in "defg"}
    channel.reset(floor=20)
    assert channel.latest == {}
