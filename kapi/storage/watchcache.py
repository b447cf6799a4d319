"""The per-process watch cache: one database listener feeding every watcher.

Modelled on kube-apiserver's cacher (``pkg/storage/cacher``): instead of a query
loop per watch, each API server process runs ONE asyncio task with ONE psycopg
connection that ``LISTEN``s for the wake-up hint (``kapi.storage.notify``),
learns the horizon, then reads change-log rows in ``(revision, horizon]`` in
version order and appends them to a :class:`Channel` per stored resource. It
reads only the resources it has channels for (somebody here watches them,
caches their lists, guards watches with them or updates them: an update starts
from the change last read of its object, :meth:`WatchCache.latest`, instead of
reading the row): the rest of the log is nothing to this process. Reading
every write's JSON, and an update's previous state too, cost PostgreSQL
160-173 us per read of 8 changes in every API process, against 47-50 us for
one followed collection (``bench/listener_read.py``). It also polls every
``KAPI_WATCH_POLL_SECONDS`` (default 0.25 s), so a lost hint costs latency,
never an event. Every process does the same, so writes made
through any process reach the watchers of all of them.

A channel is a bounded, ordered buffer of recent events that its watchers read
with a cursor (a sequence number) rather than through a queue each: one append
per event whatever the number of watchers, and a watcher costs nothing while
it waits. A watcher that falls more than the channel's capacity behind (a slow
client) finds its cursor trimmed away: its watch ends and the client
re-watches from the last version it saw (kube ends slow watchers the same
way). A watcher that is stuck sending (its client stopped reading its socket)
would never come back to find that out, so the channel itself ends it: each
watcher registers a :class:`Reader` with its cursor, and when a publish trims
past the cursor of a reader that is not waiting for events, the reader's
``on_overflow(stalled=True)`` runs (the HTTP layer closes the connection, like
kube's "forcing watcher close due to unresponsiveness"). ``Channel.floor`` says from where the buffer is complete: a watch
starting below it first catches up from the change log in the database.

Ordering: the horizon guarantees that every version at or below it has
committed or aborted, so rows read up to it are final and nothing can later
appear below them (see ``kapi/storage/postgres.py``). The listener does not
wait in PostgreSQL for the writes in flight, as ``kapi_rv_horizon()`` does:
at each wake-up it reads the sequence and the writers in flight once
(``kapi_rv_progress()``, migration 0012) and publishes up to the newest
earlier reading whose writers have all ended since (:class:`Readings`). Each
of those writers announces its commit, so the next wake-up comes after it.
"""

from __future__ import annotations

import asyncio
import bisect
import logging
import math
import os
import signal
import threading
from collections.abc import Callable

from kapi import pid
from kapi.observability import metrics
from kapi.storage.backend.statements import (
    GENERIC_PLANS,
    PREPARE,
    Statement,
    statement_rows,
)
from kapi.storage.changes import (
    ChangeEvent,
    change_from_row,
    collections_changes_statement,
    conninfo,
    previous_states_statement,
)
from kapi.storage.notify import CHANNEL

__all__ = ["Channel", "Reader", "WatchCache", "watch_cache"]

log = logging.getLogger(__name__)

#: Granularity of Channel.wait's timeouts (watch deadlines and bookmarks), seconds.
TICK = 0.05

# The listener's statements, through libpq (kapi.storage.backend.statements).
_HORIZON = Statement(
    "rv_horizon", "SELECT kapi_rv_horizon(%s), (SELECT revision FROM kapi_compaction WHERE id = 1)"
)
_PROGRESS = Statement("rv_progress", "SELECT seq, writers, compacted FROM kapi_rv_progress()")


def _text_array(value: bytes | None) -> frozenset[str]:
    """PostgreSQL's text form of a ``text[]`` of numbers (``{1,2}``)."""
    if not value or value == b"{}":
        return frozenset()
    return frozenset(value[1:-1].decode().split(","))


class Readings:
    """The listener's readings of (sequence value, writers in flight), oldest
    first, not yet known to be settled.

    A reading is settled once none of its writers is in flight any more: every
    version at or below its sequence value is then final (migration 0012), so
    that value is a horizon. Readings are settled in order (a writer of an
    older reading still in flight is also one of every later reading's)."""

    #: Readings kept before the listener waits in PostgreSQL instead (a
    #: long transaction holds every later reading).
    LIMIT = 256

    def __init__(self) -> None:
        self._readings: list[tuple[int, frozenset[str]]] = []

    def horizon(self, seq: int, writers: frozenset[str]) -> int | None:
        """Add the reading ``(seq, writers)`` and return the newest settled
        sequence value, or None if none is settled yet."""
        self._readings.append((seq, writers))
        for i in range(len(self._readings) - 1, -1, -1):
            value, theirs = self._readings[i]
            if theirs.isdisjoint(writers):
                del self._readings[: i + 1]
                return value
        return None

    def full(self) -> bool:
        return len(self._readings) >= self.LIMIT

    def clear(self) -> None:
        self._readings.clear()


class Reader:
    """One watcher's cursor as its channel sees it.

    ``position`` is the sequence number the watcher reads from next (None while
    it catches up from the database); ``waiting`` is true while it waits for
    new events (so it is caught up, not stuck). ``on_overflow(stalled)`` runs
    once, when the watcher is found to have fallen behind: by the channel when
    it trims past a stalled reader (``stalled=True``), or by the watcher itself
    when it comes back and finds its events gone (``stalled=False``).
    """

    __slots__ = ("_on_overflow", "ended", "position", "waiting")

    def __init__(self, on_overflow: Callable[[bool], None]) -> None:
        self.position: int | None = None
        self.waiting = False
        self.ended = False
        self._on_overflow = on_overflow

    def overflow(self, stalled: bool) -> None:
        if not self.ended:
            self.ended = True
            self._on_overflow(stalled)


class Channel:
    """Recent change events of one stored (group, resource), in version order.

    Sequence numbers address events: ``offset`` is the number of ``events[0]``,
    ``end`` the number the next event will get. Every event of the resource
    with a version above ``floor`` is in ``events`` or still to come.

    ``latest`` maps (namespace, name) to the newest event of each object that
    still exists, among those in ``events``: what writes start from before they
    read the database (``Storage.recent``), and the previous state of the
    object's next MODIFIED event (:meth:`fill_previous`). It holds no object of
    its own.

    ``keepers`` are called (on the loop, with the channel) before events are
    trimmed: what keeps a copy of the collection up to date from the events
    (a list cache store) catches up there, instead of being filled again from
    the database once the events it needs are gone.

    ``observers`` are called (on the loop) with every published batch, and
    with None when the channel is reset (events were lost): what keeps a
    small summary of the collection (``kapi.quota.lister``).
    """

    def __init__(self, floor: int, capacity: int) -> None:
        self.events: list[ChangeEvent] = []
        self.latest: dict[tuple[str, str], ChangeEvent] = {}
        self.offset = 0
        self.floor = floor
        self.capacity = capacity
        self.readers: set[Reader] = set()
        self.keepers: dict[object, Callable[[Channel], None]] = {}
        self.observers: list[Callable[[list[ChangeEvent] | None], None]] = []
        self._waiters: list[asyncio.Future] = []
        #: Shared timers: rounded wake-up time -> (handle, the futures waiting for it).
        self._ticks: dict[float, tuple[asyncio.TimerHandle, set[asyncio.Future]]] = {}

    @property
    def end(self) -> int:
        return self.offset + len(self.events)

    def position_after(self, revision: int) -> int | None:
        """The sequence number of the first event above ``revision``, or None
        when the buffer does not reach back that far."""
        if revision < self.floor:
            return None
        i = bisect.bisect_right(self.events, revision, key=lambda e: e.revision)
        return self.offset + i

    def since(self, position: int) -> list[ChangeEvent] | None:
        """Events from ``position`` on; None if they were trimmed (overflow)."""
        if position < self.offset:
            return None
        return self.events[position - self.offset :]

    def fill_previous(self, batch: list[ChangeEvent]) -> list[ChangeEvent]:
        """Give each MODIFIED event of ``batch`` (the next to publish, in
        order) without a previous state the state of the object's event before
        it, when this channel holds that one; returns the events left without.
        The channel has every event of its collection above its floor, so the
        newest one it holds of an object is the one right before."""
        latest = self.latest
        newer: dict[tuple[str, str], ChangeEvent | None] = {}
        missing = []
        for event in batch:
            key = (event.namespace, event.name)
            if event.type == "MODIFIED" and event.prev_raw is None:
                before = newer[key] if key in newer else latest.get(key)
                if before is None:
                    missing.append(event)
                else:
                    event.prev_raw = before.raw
            newer[key] = None if event.type == "DELETED" else event
        return missing

    def publish(self, batch: list[ChangeEvent]) -> None:
        for observe in self.observers:
            observe(batch)
        self.events.extend(batch)
        latest = self.latest
        for event in batch:
            if event.type == "DELETED":
                latest.pop((event.namespace, event.name), None)
            else:
                latest[(event.namespace, event.name)] = event
        # Trim in chunks (a quarter of the capacity) so appends stay O(1) amortised.
        if len(self.events) > self.capacity + self.capacity // 4:
            for keep in list(self.keepers.values()):
                keep(self)
            drop = len(self.events) - self.capacity
            self.floor = self.events[drop - 1].revision
            for event in self.events[:drop]:
                key = (event.namespace, event.name)
                if latest.get(key) is event:
                    del latest[key]
            del self.events[:drop]
            self.offset += drop
            self._end_stalled_readers()
        self.wake()

    def _end_stalled_readers(self) -> None:
        stalled = [
            r for r in self.readers
            if not r.waiting and r.position is not None and r.position < self.offset
        ]
        for reader in stalled:
            self.readers.discard(reader)
            reader.overflow(stalled=True)

    def reset(self, floor: int) -> None:
        """Forget everything: every current watcher overflows and ends."""
        self.offset = self.end + 1
        self.events = []
        self.latest = {}
        self.floor = floor
        for observe in self.observers:
            observe(None)
        self.wake()

    def wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    async def wait(self, timeout: float | None) -> None:
        """Until the next publish (or wake), or ``timeout`` seconds (rounded up
        to the next ``TICK``).

        Waiters share one timer per tick instead of arming one per wait: a
        watch waits once per event with the same deadline (its end or its
        next bookmark), and with 1,000 watchers a fresh ``asyncio.timeout``
        per wait was a sixth of the event loop's time."""
        if timeout is not None and timeout <= 0:
            return
        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        self._waiters.append(waiter)
        if timeout is None:
            await waiter
            return
        at = math.ceil((loop.time() + timeout) / TICK) * TICK
        tick = self._ticks.get(at)
        if tick is None:
            tick = self._ticks[at] = (loop.call_at(at, self._fire, at), set())
        tick[1].add(waiter)
        try:
            await waiter
        finally:
            tick[1].discard(waiter)

    def _fire(self, at: float) -> None:
        _handle, waiters = self._ticks.pop(at)
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)


class WatchCache:
    """The listener and the channels of one process (one event loop)."""

    def __init__(
        self,
        *,
        poll_interval: float | None = None,
        capacity: int | None = None,
        batch: int = 2000,
        connect: Callable[[], str] = lambda: conninfo("kapi-watch-cache"),
    ) -> None:
        env = os.environ.get
        self.poll_interval = poll_interval or float(env("KAPI_WATCH_POLL_SECONDS", "0.25"))
        self.capacity = capacity or int(env("KAPI_WATCH_CACHE_EVENTS", "10000"))
        self.batch = batch
        self._connect = connect
        #: Every change at or below this has been published to the channels.
        self.revision = 0
        #: Notified (from the loop) whenever ``revision`` moves: request
        #: threads wait on it for the cache to catch up with a consistent read.
        self._advanced = threading.Condition()
        self.compacted = 0
        self.channels: dict[tuple[str, str], Channel] = {}
        self.stopping = False
        self.stats = {
            "watchers": 0, "overflows": 0, "events": 0, "reads": 0, "previous_reads": 0, "notifies": 0, "pumps": 0,
        }
        self._task: asyncio.Task | None = None
        #: The event loop the listener runs on (set by ``start``).
        self.loop: asyncio.AbstractEventLoop | None = None
        self._ready: asyncio.Event | None = None
        self._stop_waiters: list[Callable[[], None]] = []
        self._readings = Readings()

    # -- lifecycle ---------------------------------------------------------------
    async def start(self) -> None:
        """Start the listener (once) and wait for its first horizon."""
        if self._task is None:
            self.loop = asyncio.get_running_loop()
            self._ready = asyncio.Event()
            self._task = asyncio.get_running_loop().create_task(self._run(), name="kapi-watch-cache")
            self._hook_signals()
        await self._ready.wait()

    def _hook_signals(self) -> None:
        """End every watch as soon as the server is told to stop, so uvicorn's
        graceful shutdown finds the streams closed cleanly (chained before the
        handler uvicorn installed)."""
        if threading.current_thread() is not threading.main_thread():
            return
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            previous = signal.getsignal(sig)

            def handler(signum, frame, previous=previous):
                loop.call_soon_threadsafe(self.shutdown)
                if callable(previous):
                    previous(signum, frame)

            signal.signal(sig, handler)

    def shutdown(self) -> None:
        self.stopping = True
        for channel in self.channels.values():
            channel.wake()
        for waiter in self._stop_waiters:
            waiter()

    def on_stop(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` at shutdown; returns a function that unregisters it."""
        self._stop_waiters.append(callback)
        return lambda: self._stop_waiters.remove(callback)

    def wait_for_revision(self, revision: int, timeout: float) -> bool:
        """From a thread other than the loop's: wait at most ``timeout``
        seconds until every change up to ``revision`` is published."""
        with self._advanced:
            return self._advanced.wait_for(lambda: self.revision >= revision, timeout)

    def _advance(self, revision: int) -> None:
        with self._advanced:
            self.revision = revision
            self._advanced.notify_all()

    def channel(self, group: str, resource: str) -> Channel:
        key = (group, resource)
        channel = self.channels.get(key)
        if channel is None:
            # Nothing of this resource above ``revision`` has been published yet.
            channel = self.channels[key] = Channel(self.revision, self.capacity)
        return channel

    def latest(self, group: str, resource: str, namespace: str, name: str) -> ChangeEvent | None:
        """The newest event this process keeps of an object that still exists
        (None: none kept, or it was deleted). Any thread may ask: it reads
        dictionaries the loop changes one step at a time."""
        channel = self.channels.get((group, resource))
        return None if channel is None else channel.latest.get((namespace, name))

    def follow(self, group: str, resource: str) -> None:
        """Have the listener read (group, resource) from now on, if it runs
        (returns at once, from any thread): what an update asks for when
        :meth:`latest` knows nothing. The listener's read of a followed
        collection costs PostgreSQL 47-50 us per 8 changes
        (``bench/listener_read.py``); reading the row costs a round trip per
        update."""
        loop = self.loop
        if loop is None or self.stopping or (group, resource) in self.channels:
            return
        try:
            loop.call_soon_threadsafe(self.channel, group, resource)
        except RuntimeError:  # the loop has closed: the process is stopping
            pass

    # -- the listener ----------------------------------------------------------------
    async def _run(self) -> None:
        import psycopg

        delay = 0.1
        while not self.stopping:
            try:
                async with await psycopg.AsyncConnection.connect(
                    self._connect(), autocommit=True
                ) as conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    if PREPARE:
                        await conn.execute(GENERIC_PLANS)
                    await self._pump(conn)
                    self._ready.set()
                    delay = 0.1
                    while not self.stopping:
                        async for _ in conn.notifies(timeout=self.poll_interval, stop_after=1):
                            self.stats["notifies"] += 1
                        # The ones that came meanwhile (most, while the last
                        # pump ran) ask for the same pump: one read for all.
                        async for _ in conn.notifies(timeout=0):
                            self.stats["notifies"] += 1
                        self.stats["pumps"] += 1
                        await self._pump(conn)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("kapi: watch cache listener failed; reconnecting", exc_info=True)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)

    def _statement(self, collections: tuple[tuple[str, str], ...]) -> tuple[Statement, list]:
        """The change-log read for ``collections`` and its scope parameters."""
        return collections_changes_statement(collections)

    async def _horizon(self, conn) -> tuple[int | None, int]:
        """The horizon (None: no newer one is settled yet) and the compaction mark."""
        if self.revision and not self._readings.full():
            ((seq, writers, compacted),) = await conn.wait(statement_rows(conn, _PROGRESS, []))
            horizon = self._readings.horizon(int(seq), _text_array(writers))
            return horizon, int(compacted)
        # The first reading, or a transaction holding many: wait for the
        # writers in flight in PostgreSQL.
        self._readings.clear()
        ((horizon, compacted),) = await conn.wait(statement_rows(conn, _HORIZON, [10000]))
        return int(horizon), int(compacted)

    async def _read_previous(self, conn, events: list[ChangeEvent]) -> None:
        """The previous states of ``events`` from the change log (objects this
        process has not seen change since it followed their collection)."""
        self.stats["previous_reads"] += 1
        statement, params = previous_states_statement(events)
        states = {int(rv): prev for rv, prev in await conn.wait(statement_rows(conn, statement, params))}
        for event in events:
            event.prev_raw = states.get(event.revision)

    async def _pump(self, conn) -> None:
        """Publish every change up to the current horizon."""
        horizon, compacted = await self._horizon(conn)
        if horizon is None:
            # Nothing newer settled yet: the writers in flight announce
            # their commits, and the poll comes anyway.
            return
        horizon = max(horizon, self.revision)
        self.compacted = compacted
        if compacted > self.revision:
            # We fell behind compaction: history we have not read may be gone.
            for channel in self.channels.values():
                channel.reset(horizon)
            self._advance(horizon)
            return
        while self.revision < horizon:
            collections = tuple(self.channels)
            if not collections:
                # Nobody here follows anything yet (the first read too): start
                # from now; watches reach back through the database.
                self._advance(horizon)
                break
            statement, scope = self._statement(collections)
            rows = await conn.wait(statement_rows(conn, statement, [self.revision, horizon, *scope, self.batch]))
            if len(self.channels) != len(collections):
                # A channel opened while we read (channels are never closed):
                # its events in this range are not among the rows. Read again.
                continue
            self.stats["reads"] += 1
            by_channel: dict[tuple[str, str], list[ChangeEvent]] = {}
            for row in rows:
                event = change_from_row(row)
                by_channel.setdefault((event.group, event.resource), []).append(event)
            self.stats["events"] += len(rows)
            missing = [e for key, events in by_channel.items() for e in self.channels[key].fill_previous(events)]
            if missing:
                await self._read_previous(conn, missing)
            upto = int(rows[-1][0]) if len(rows) == self.batch else horizon
            for key, events in by_channel.items():
                metrics.WATCH_CACHE_EVENTS_RECEIVED.labels(*key).inc(len(events))
                self.channels[key].publish(events)
            # Only now: a request thread reading ``revision`` (the list
            # cache) must find every event at or below it published.
            self._advance(upto)
        # Channels without events learn of the new revision on their next wait.


_caches: dict[int, WatchCache] = {}


def watch_cache() -> WatchCache:
    """This process's cache (one per process; created on first use)."""
    here = pid.current()
    cache = _caches.get(here)
    if cache is None:
        cache = _caches[here] = WatchCache()
    return cache
