"""The previous state of each MODIFIED event the watch cache publishes (what
a selector matched before the write: kube's ``PrevObject``). The listener
takes it from the channel's own newer events when it has seen the object's
change before (``Channel.fill_previous``), and reads the change log only for
the others, against the real PostgreSQL."""

from __future__ import annotations

import orjson
import pytest
from storage.conftest import GROUP, on_loop, revision, start_cache, stop_cache, widget

from kapi.storage.changes import ChangeEvent
from kapi.storage.interface import Key
from kapi.storage.watchcache import Channel

pytestmark = pytest.mark.usefixtures("storage")


def _event(rv: int, name: str, type: str, spec: int) -> ChangeEvent:
    raw = orjson.dumps({"metadata": {"name": name}, "spec": {"n": spec}})
    return ChangeEvent(rv, GROUP, "widgets", "ns", name, type, raw, None)


def test_a_channel_fills_in_what_it_saw_before() -> None:
    channel = Channel(floor=0, capacity=100)
    a1 = _event(1, "a", "ADDED", 1)
    channel.publish([a1])
    a2, b3, a4 = _event(2, "a", "MODIFIED", 2), _event(3, "b", "MODIFIED", 1), _event(4, "a", "MODIFIED", 3)
    d5, c6, c7 = _event(5, "a", "DELETED", 3), _event(6, "c", "ADDED", 1), _event(7, "c", "MODIFIED", 2)
    batch = [a2, b3, a4, d5, c6, c7]
    # b changed before the channel saw it: its previous state is for the database.
    assert channel.fill_previous(batch) == [b3]
    assert (a2.prev_raw, a4.prev_raw, c7.prev_raw) == (a1.raw, a2.raw, c6.raw)
    assert d5.prev_raw == d5.raw and b3.prev_raw is None


def test_the_listener_publishes_every_previous_state(storage, resource, loop) -> None:
    from kapi.storage.watchcache import WatchCache

    before = storage.create(Key(GROUP, resource, "ns", "old"), widget("old", "ns", spec={"n": 0}))
    cache = WatchCache(poll_interval=0.05)
    start_cache(loop, cache)
    try:
        channel = on_loop(loop, lambda: cache.channel(GROUP, resource))
        key = Key(GROUP, resource, "ns", "a")
        states = [storage.create(key, widget("a", "ns", spec={"n": 1}))]
        for n in (2, 3):
            states.append(storage.update(key, {**states[-1], "spec": {"n": n}}, revision(states[-1])))
        assert cache.wait_for_revision(revision(states[-1]), timeout=10)
        assert cache.stats["previous_reads"] == 0  # all three were in the channel
        # An object last changed before the channel opened: from the log.
        old = storage.update(Key(GROUP, resource, "ns", "old"), {**before, "spec": {"n": 9}}, revision(before))
        assert cache.wait_for_revision(revision(old), timeout=10)
        assert cache.stats["previous_reads"] == 1
        events = on_loop(loop, lambda: channel.since(channel.offset))
        modified = [(e.name, e.prev["spec"], e.object["spec"]) for e in events if e.type == "MODIFIED"]
        assert modified == [("a", {"n": 1}, {"n": 2}), ("a", {"n": 2}, {"n": 3}), ("old", {"n": 0}, {"n": 9})]
    finally:
        stop_cache(loop, cache)
