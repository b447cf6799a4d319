"""The watch cache reads only the collections it has channels for
(``kapi.storage.watchcache``), against the real PostgreSQL: the writes of
other collections never reach the process, and a channel that opens while the
listener is reading still gets every event above its floor."""

from __future__ import annotations

import pytest
from django.db import transaction
from storage.conftest import GROUP, on_loop, start_cache, stop_cache, widget
from storage.conftest import revision as _rv

from kapi.storage.interface import Key

pytestmark = pytest.mark.usefixtures("storage")


def test_the_writes_of_collections_nobody_follows_are_not_read(storage, resource, loop) -> None:
    from kapi.storage.watchcache import WatchCache

    followed, other = resource, f"{resource}-other"
    cache = WatchCache(poll_interval=0.05)
    start_cache(loop, cache)
    try:
        channel = on_loop(loop, lambda: cache.channel(GROUP, followed))
        written = []
        for i in range(5):
            written.append(storage.create(Key(GROUP, other, "ns", f"o{i}"), widget(f"o{i}", "ns")))
            written.append(storage.create(Key(GROUP, followed, "ns", f"f{i}"), widget(f"f{i}", "ns")))
        assert cache.wait_for_revision(max(map(_rv, written)), timeout=10)
        events = on_loop(loop, lambda: [(e.name, e.revision) for e in channel.since(channel.offset)])
        assert events == [(o["metadata"]["name"], _rv(o)) for o in written if o["metadata"]["name"][0] == "f"]
        # The listener read the followed collection's rows and no others
        # (other tests' writes are in collections of their own).
        assert cache.stats["events"] == 5
    finally:
        stop_cache(loop, cache)


def test_a_channel_opened_while_the_listener_reads_gets_every_event_above_its_floor(
    storage, resource, loop
) -> None:
    from kapi.storage.watchcache import WatchCache

    followed, opened = resource, f"{resource}-late"

    class OpensAChannelMidRead(WatchCache):
        """Opens the channel of ``opened`` once, just after the listener has
        chosen which collections to read and before the rows come back, when
        that read reaches ``target`` (as a watch can open it while the
        listener awaits PostgreSQL)."""

        target: int | None = None
        horizon_seen = 0
        late = None

        async def _horizon(self, conn):
            horizon, compacted = await super()._horizon(conn)
            self.horizon_seen = max(self.horizon_seen, horizon or 0)
            return horizon, compacted

        def _statement(self, collections):
            if self.late is None and self.target is not None and self.horizon_seen >= self.target:
                self.late = self.channel(GROUP, opened)
            return super()._statement(collections)

    cache = OpensAChannelMidRead(poll_interval=0.05)
    start_cache(loop, cache)
    try:
        on_loop(loop, lambda: cache.channel(GROUP, followed))
        # One transaction: its writes reach the listener together, in one read.
        with transaction.atomic():
            written = [
                storage.create(Key(GROUP, followed, "ns", "f0"), widget("f0", "ns")),
                storage.create(Key(GROUP, opened, "ns", "l0"), widget("l0", "ns")),
                storage.create(Key(GROUP, opened, "ns", "l1"), widget("l1", "ns")),
                storage.create(Key(GROUP, followed, "ns", "f1"), widget("f1", "ns")),
            ]
            cache.target = max(map(_rv, written))
        assert cache.wait_for_revision(cache.target, timeout=10)
        late = cache.late
        assert late is not None, "the channel opened during the read"
        # Its floor is below the writes: it promises every later event of
        # its collection, so the listener must read again with it.
        assert late.floor < _rv(written[1])
        events = on_loop(loop, lambda: [(e.name, e.revision) for e in late.since(late.offset)])
        assert events == [("l0", _rv(written[1])), ("l1", _rv(written[2]))]
    finally:
        stop_cache(loop, cache)
