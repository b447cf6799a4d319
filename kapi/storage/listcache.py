"""Lists served from memory: each API process's copy of a resource's objects.

kube-apiserver answers ``resourceVersion=0`` lists (and ``NotOlderThan`` ones
its cache is fresh enough for) from its cacher's store, not from etcd
(``pkg/storage/cacher/watch_cache.go``). kapi does the same on top of the
process's watch cache (``kapi.storage.watchcache``): a :class:`Store` per
served (group, resource, apiVersion) is filled once by a consistent list from
the database and then kept current by applying that resource's change events,
read from the watch cache's channel at the store's cursor. A list brings its
store up to date (under the store's lock) before it answers; so does the
channel, before it trims events the store has not applied yet (a keeper,
``Channel.keepers``), as kube's cacher applies every event to its store. A
store costs nothing while its resource is not written. A big fill (more than
``BACKGROUND_FILL_OVER`` objects: 0.15 s and more for 10,000) asked for by a
page runs in the background, as kube's cacher is filled by its reflector:
the database answers the pages that come meanwhile, so that no small request
waits for it (the first page in a process, or the first after the channel
overflowed, stalled others for that long while a big namespace was purged). A consistent list
first waits for the watch cache to reach the database's current revision
(:meth:`ListCache.current_at_least`); pages read a :meth:`Store.snapshot`
(``kapi.storage.listsnapshot``), kept in :attr:`ListCache.snapshots`.

Each :class:`Entry` keeps the stored form as its JSON, whether a fill read
it (``Storage.list_encoded``) or an event brought it, and, once served, its
JSON encoding in the served version, which is the stored JSON itself where
the two versions are the same. A plain JSON list is the entries' bytes
joined (no parse, no re-encode); selectors match an entry's name, namespace
and labels without parsing it.

Ordering: the store is exactly the collection at ``Store.revision``. Events
are applied in version order; the watch cache raises its ``revision`` only
after publishing every event at or below it, so reading that revision before
the events proves the store complete up to it. When the channel lost events
the store needs (trimmed while a request held the store, or reset after
compaction) the store is refilled from the database. Memory (tracemalloc
over 10,000 ConfigMaps of 1 KiB data, 1.5 KiB of JSON;
``bench/list_inproc.py``): 2.1 KiB per object, its JSON and the entry
around it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
import operator
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import orjson

from kapi import pid
from kapi.storage.interface import EncodedItem, EncodedList, encode_json
from kapi.storage.listsnapshot import Snapshot, SnapshotCache
from kapi.storage.watchcache import WatchCache, watch_cache

if TYPE_CHECKING:
    from kapi.selectors import FieldSelector, LabelSelector

__all__ = ["Entry", "ListCache", "Store", "bind_loop", "enabled", "entry_matcher", "list_cache"]

Object = dict[str, Any]
#: A store's key: stored group and resource, and the served apiVersion.
Key = tuple[str, str, str]

#: The fields of an object an entry's head holds.
_HEAD_FIELDS = frozenset({"metadata.name", "metadata.namespace"})
#: How long a list waits for the watch cache to start (first use in a process).
START_TIMEOUT = 5.0
#: A store of more objects than this is filled in the background.
BACKGROUND_FILL_OVER = int(os.environ.get("KAPI_LIST_CACHE_BACKGROUND_FILL_OVER", "1000"))
#: Objects a process keeps in all its stores together (about 2 KiB each for
#: 1 KiB ConfigMaps): a resource that does not fit is listed from the
#: database, and a store that grows past the budget is dropped.
MAX_OBJECTS = int(os.environ.get("KAPI_LIST_CACHE_MAX_OBJECTS", "200000"))
#: Seconds before a resource found too big is counted again.
OVER_BUDGET_RECHECK = 30.0

log = logging.getLogger(__name__)

_loop: asyncio.AbstractEventLoop | None = None


def bind_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Remember the event loop the watch cache runs (or will run) on; the
    ASGI bridge calls this, so request threads can start it."""
    global _loop
    if _loop is None:
        _loop = loop


def enabled() -> bool:
    """Whether lists may be served from memory in this process: an API process
    with an event loop (not Celery or a management command), and not turned
    off with ``KAPI_LIST_CACHE=0``."""
    return _loop is not None and os.environ.get("KAPI_LIST_CACHE", "1") != "0"


class Entry:
    """One object in a store, read-only: ``item`` is its stored JSON with its
    key and labels (:class:`~kapi.storage.interface.EncodedItem`), parsed
    again only when something needs more than the key and labels (a field
    selector on another field, a conversion to the served version).
    ``encoded`` is the served JSON, once made: the stored JSON itself where
    the served version is the stored form."""

    __slots__ = ("encoded", "item")

    def __init__(self, item: EncodedItem) -> None:
        self.item = item
        self.encoded: bytes | None = None

    @property
    def stored(self) -> Object:
        """The stored form with its resourceVersion: a new copy at each call."""
        return orjson.loads(self.item.json)

    @property
    def labels(self) -> Mapping[str, str]:
        return self.item.labels

    @property
    def head(self) -> Object:
        """What key and label selections read: the object's metadata name,
        namespace and labels."""
        item = self.item
        meta = {"name": item.name, "labels": item.labels}
        if item.namespace:
            meta["namespace"] = item.namespace
        return {"metadata": meta}


class Store:
    """One resource's objects as of ``revision``; ``position`` is the cursor in
    the watch cache's channel (None: fill from the database first)."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str], Entry] = {}
        self.revision = 0
        #: The revision of the last change applied (or of the fill): the
        #: objects are the collection at every revision from here to ``revision``.
        self.changed = 0
        self.position: int | None = None
        self.lock = threading.Lock()
        self._sorted: tuple[tuple[str, str], ...] | None = None
        self._snapshot: Snapshot | None = None

    def keys(self) -> tuple[tuple[str, str], ...]:
        """Keys in (namespace, name) order, as the database lists them (its
        columns collate as "C": code point order, as Python compares)."""
        if self._sorted is None:
            self._sorted = tuple(sorted(self.objects))
        return self._sorted

    def snapshot(self) -> Snapshot:
        """The store as it is now, frozen (called with ``lock`` held). Made
        again only after a change: a store that only moved to a newer revision
        shares the previous snapshot's tuples."""
        snapshot = self._snapshot
        if snapshot is None:
            keys = self.keys()
            entries = tuple(map(self.objects.__getitem__, keys))
            snapshot = self._snapshot = Snapshot(self.revision, keys, entries, self.changed)
        elif snapshot.revision != self.revision:
            snapshot = self._snapshot = Snapshot(self.revision, snapshot.keys, snapshot.entries, self.changed)
        return snapshot

    def fill(self, listed: EncodedList) -> None:
        self.objects = {(item.namespace, item.name): Entry(item) for item in listed.items}
        self.revision = self.changed = listed.revision
        self._sorted = None
        self._snapshot = None

    def apply(self, events: Iterable, seen: int) -> None:
        """Apply change events (in version order) newer than the store; then
        the store is complete up to ``seen`` as well."""
        from kapi.storage.postgres import encoded_item

        for event in events:
            if event.revision <= self.revision:
                continue  # already in the list the store was filled from
            key = (event.namespace, event.name)
            self._snapshot = None
            if event.type == "DELETED":
                if self.objects.pop(key, None) is not None:
                    self._sorted = None
            else:
                if key not in self.objects:
                    self._sorted = None
                self.objects[key] = Entry(encoded_item(event.raw, event.revision))
            self.revision = self.changed = event.revision
        self.revision = max(self.revision, seen)


def entry_matcher(
    labels: LabelSelector | None, fields: FieldSelector | None
) -> Callable[[Entry], bool] | None:
    """Whether an entry is selected by ``labels`` and ``fields`` (None: no
    selection). An entry's head (metadata name, namespace and labels) answers
    selectors on those; one on any other field parses the entry."""
    labels = labels if labels is not None and not labels.empty else None
    fields = fields if fields is not None and not fields.empty else None
    if labels is None and fields is None:
        return None
    on_head = fields is None or all(r.path in _HEAD_FIELDS for r in fields.requirements)
    view = operator.attrgetter("head" if on_head else "stored")

    def matches(entry: Entry) -> bool:
        return (labels is None or labels.matches(entry.labels)) and (fields is None or fields.matches(view(entry)))

    return matches


def _catch_up(store: Store, channel, over_budget: Callable[[Store], bool] = lambda _: False) -> None:
    """A channel's keeper (``Channel.keepers``, on the loop, before the
    channel trims events): apply the events ``store`` has not, so that it
    never needs a fill again because they were gone; unless a request holds
    the store (it brings it up to date itself), or it is not filled."""
    if not store.lock.acquire(blocking=False):
        return
    try:
        if store.position is None:
            return
        events = channel.since(store.position)
        if events is None:
            store.position = None
            return
        store.apply(events, 0)
        store.position += len(events)
        over_budget(store)
    except Exception:  # noqa: BLE001 - the next list fills the store again
        store.position = None
        log.warning("bringing a list cache store up to date failed", exc_info=True)
    finally:
        store.lock.release()


def _on_loop(loop: asyncio.AbstractEventLoop | None, fn: Callable[[], Any]) -> Any:
    """``fn()`` run on ``loop`` (a channel is only consistent there), from a request thread."""
    if loop is None:
        raise RuntimeError("the watch cache is not running")
    done: concurrent.futures.Future = concurrent.futures.Future()

    def run() -> None:
        try:
            done.set_result(fn())
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            done.set_exception(exc)

    loop.call_soon_threadsafe(run)
    return done.result(START_TIMEOUT)


class ListCache:
    """The stores of one process."""

    def __init__(self, cache: WatchCache | None = None) -> None:
        self._cache = cache
        self._stores: dict[Key, Store] = {}
        self._lock = threading.Lock()
        #: Stores being filled by a background thread.
        self._filling: set[Key] = set()
        #: Snapshots that paged lists read their pages from (by store key and revision).
        self.snapshots = SnapshotCache()
        self.max_objects = MAX_OBJECTS
        #: Resources found too big for the budget: when they were last counted.
        self._over: dict[Key, float] = {}

    def held(self, but: Key | None = None) -> int:
        """Objects kept in the filled stores (other than ``but``'s)."""
        return sum(len(s.objects) for k, s in list(self._stores.items()) if k != but and s.position is not None)

    def _room(self, key: Key) -> int:
        return self.max_objects - self.held(but=key)

    def _drop_if_over(self, key: Key, store: Store) -> bool:
        """Empty ``store`` (with its lock held) when the stores together
        outgrew the budget by a tenth; True if it did."""
        if len(store.objects) <= self._room(key) + self.max_objects // 10:
            return False
        log.info("list cache: %s/%s holds %d objects, over the budget of %d; listing it from the database",
                 key[0], key[1], len(store.objects), self.max_objects)
        self._over[key] = time.monotonic()
        channel = self.cache.channels.get((key[0], key[1]))
        if channel is not None:
            channel.keepers.pop(key, None)
        store.objects = {}
        store._sorted = store._snapshot = None
        store.position = None
        return True

    @property
    def cache(self) -> WatchCache:
        return self._cache or watch_cache()

    def filled(self, key: Key) -> bool:
        """Whether this process keeps ``key``'s objects (has listed them)."""
        store = self._stores.get(key)
        return store is not None and store.position is not None

    def store(self, key: Key) -> Store:
        with self._lock:
            store = self._stores.get(key)
            if store is None:
                store = self._stores[key] = Store()
            return store

    def _channel(self, group: str, resource: str):
        """The watch cache's channel, created on its loop (the listener
        publishes there, so a channel must not appear halfway through a batch)."""
        cache = self.cache
        channel = cache.channels.get((group, resource))
        if channel is not None and cache.loop is not None:
            return channel
        loop = _loop
        if loop is None or loop.is_closed():
            return None

        async def open_channel():
            await cache.start()
            return cache.channel(group, resource)

        try:
            return asyncio.run_coroutine_threadsafe(open_channel(), loop).result(START_TIMEOUT)
        except Exception:  # noqa: BLE001 - no cache now: the caller lists from the database
            return None

    def observe(self, group: str, resource: str, observer: Callable[[list | None], None]) -> bool:
        """Have ``observer`` called on the loop with every batch of (group,
        resource) events the watch cache publishes from now on (None when it
        lost some: ``Channel.observers``); False when the watch cache is not
        available in this process."""
        channel = self._channel(group, resource)
        if channel is None or not enabled():
            return False
        try:
            _on_loop(self.cache.loop, lambda: channel.observers.append(observer))
        except Exception:  # noqa: BLE001 - the loop is stopping: nothing to observe
            return False
        return True

    def current(
        self, key: Key, fill: Callable[[], EncodedList], size: Callable[[int], int] | None = None,
        background: bool = False,
    ) -> Store | None:
        """The store for ``key`` brought up to date; None when the watch cache
        is unavailable, or a big fill is under way in the background
        (``size(n)`` counts the objects up to ``n``), and the caller must list
        from the database. The caller reads the store under ``store.lock``."""
        channel = self._channel(key[0], key[1])
        if channel is None:
            return None
        store = self.store(key)
        if store.position is None and key in self._filling:
            return None  # not taking the lock the filling thread holds
        with store.lock:
            try:
                return self._bring_up_to_date(key, store, channel, fill, size, background)
            except BaseException:
                store.position = None  # half applied: refill next time
                raise

    def current_at_least(
        self,
        key: Key,
        fill: Callable[[], EncodedList],
        revision: int,
        timeout: float,
        size: Callable[[int], int] | None = None,
        background: bool = False,
    ) -> Store | None:
        """The store for ``key`` once it has reached ``revision`` (waiting at
        most ``timeout`` seconds for the watch cache to read that far); None
        when it cannot, and the caller must list from the database."""
        deadline = time.monotonic() + timeout
        while True:
            store = self.current(key, fill, size, background)
            if store is None or store.revision >= revision:
                return store
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self.cache.wait_for_revision(revision, remaining):
                return None

    def _bring_up_to_date(
        self, key: Key, store: Store, channel, fill: Callable[[], EncodedList],
        size: Callable[[int], int] | None, background: bool,
    ) -> Store | None:
        """Called with ``store.lock`` held."""
        cache = self.cache
        for _attempt in range(2):
            if store.position is None:
                checked = self._over.get(key)
                if checked is not None and time.monotonic() - checked < OVER_BUDGET_RECHECK:
                    return None
                room = self._room(key)
                if size is not None:
                    count = size(max(room, BACKGROUND_FILL_OVER) + 1)
                    if count > room:
                        self._over[key] = time.monotonic()
                        return None
                    self._over.pop(key, None)
                if background and size is not None and count > BACKGROUND_FILL_OVER:
                    self._fill_in_background(key, store, channel, fill)
                    return None
                if not self._fill(key, store, channel, fill):
                    return None
            # Channels change on the loop only; read there, all at once:
            # the revision first (every event at or below it is published).
            seen, events = _on_loop(cache.loop, lambda: (cache.revision, channel.since(store.position)))
            if events is None:
                store.position = None  # events we need were trimmed: refill
                continue
            store.apply(events, seen)
            store.position += len(events)
            if self._drop_if_over(key, store):
                return None
            return store
        return None

    def _fill(self, key: Key, store: Store, channel, fill: Callable[[], EncodedList]) -> bool:
        """Fill ``store`` from the database and join it to the channel, which
        keeps it from then on (with ``store.lock`` held); False when the
        channel starts after the list."""
        listed = fill()
        if len(listed.items) > self._room(key):
            self._over[key] = time.monotonic()
            return False
        self._over.pop(key, None)

        def join() -> int | None:
            position = channel.position_after(listed.revision)
            if position is not None:
                channel.keepers[key] = functools.partial(
                    _catch_up, store, over_budget=functools.partial(self._drop_if_over, key))
            return position

        position = _on_loop(self.cache.loop, join)
        if position is None:
            return False  # the channel starts after the list: no way to join them
        store.fill(listed)
        store.position = position
        return True

    def _fill_in_background(self, key: Key, store: Store, channel, fill: Callable[[], EncodedList]) -> None:
        """Start filling ``store`` in a thread of its own, unless one is."""
        with self._lock:
            if key in self._filling:
                return
            self._filling.add(key)

        def run() -> None:
            from django.db import connection

            try:
                with store.lock:
                    if store.position is None:
                        self._fill(key, store, channel, fill)
            except Exception:  # noqa: BLE001 - the next list tries again
                log.warning("filling the list cache of %s failed", key, exc_info=True)
            finally:
                with self._lock:
                    self._filling.discard(key)
                connection.close()

        threading.Thread(target=run, name=f"list-cache-fill {key[0]}/{key[1]}", daemon=True).start()

    @staticmethod
    def encode(entry: Entry, convert: Callable[[Object], Object] | None) -> bytes:
        """The entry's served JSON, made once: the stored form converted by
        ``convert`` (which gets a private copy), or as it is stored when
        ``convert`` is None (the served version is the stored form)."""
        encoded = entry.encoded
        if encoded is None:
            # A parse of the stored JSON is already a private copy.
            encoded = entry.item.json if convert is None else encode_json(convert(entry.stored))
            entry.encoded = encoded
        return encoded


_caches: dict[int, ListCache] = {}


def list_cache() -> ListCache:
    """This process's list cache."""
    here = pid.current()
    cache = _caches.get(here)
    if cache is None:
        cache = _caches[here] = ListCache()
    return cache
