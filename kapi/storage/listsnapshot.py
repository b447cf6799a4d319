"""Snapshots of a list cache store: the collection frozen at one revision.

kube-apiserver 1.34 serves paged lists from its cacher by keeping snapshots of
the watch cache's store (KEP-4988, "snapshottable API server cache"): the first
page takes a snapshot at the list's revision, and ``continue`` tokens at that
revision read the rest of it from memory instead of from etcd. kapi does the
same per process: a :class:`Snapshot` is two tuples (keys in (namespace, name)
order, and the store's entries in the same order), so it costs two pointer
arrays, not a copy of the objects: entries are never mutated, a later write
replaces an entry in the store and leaves the snapshot's one alone.

:class:`SnapshotCache` keeps the recent snapshots of a process in a small LRU,
bounded in number (``KAPI_LIST_SNAPSHOTS``, default 8) and age
(``KAPI_LIST_SNAPSHOT_SECONDS`` unused, default 60). A token whose snapshot is gone
(evicted, expired, or made by another API process) is served from the database
at its revision, exactly as before: a snapshot is the same collection the
database lists at that revision, so either answer is the same.

Memory: the two tuples take 16 bytes per object (about 160 KiB for 10,000);
what a snapshot can keep alive beyond that are the entries written over since
it was taken, at most every object of the resource per snapshot.
"""

from __future__ import annotations

import bisect
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Page", "Snapshot", "SnapshotCache"]

Key = tuple[str, str]


@dataclass(frozen=True)
class Page:
    """``entries`` selected, the key of the last one when more follow, and how
    many objects follow it (when counting is asked for and possible)."""

    entries: list[Any]
    last_key: Key | None
    remaining: int | None


class Snapshot:
    """A store's entries at ``revision``, in key order (read-only). ``since``
    is the revision of the last change in them: the collection was the same
    at every revision from ``since`` to ``revision``."""

    __slots__ = ("entries", "keys", "revision", "since")

    def __init__(
        self, revision: int, keys: tuple[Key, ...], entries: tuple[Any, ...], since: int | None = None
    ) -> None:
        self.revision = revision
        self.keys = keys
        self.entries = entries
        self.since = revision if since is None else since

    def covers(self, revision: int) -> bool:
        """Whether this is also the collection as it stood at ``revision``."""
        return self.since <= revision <= self.revision

    def span(self, namespace: str | None, after: Key | None) -> tuple[int, int]:
        """Index range of the keys in ``namespace`` (all when None) after ``after``."""
        keys = self.keys
        if namespace is None:
            lo, hi = 0, len(keys)
        else:
            # (namespace, name) order: one namespace is one run of keys.
            lo = bisect.bisect_left(keys, (namespace,))
            hi = bisect.bisect_left(keys, (namespace + "\0",))
        if after is not None:
            lo = max(lo, bisect.bisect_right(keys, after))
        return lo, hi

    def page(
        self,
        namespace: str | None,
        after: Key | None,
        limit: int | None,
        matches: Callable[[Any], bool] | None,
        count_remaining: bool,
    ) -> Page:
        """The entries the database would list with the same scope, ``after``,
        ``limit`` and selection (``matches``; None selects every entry)."""
        lo, hi = self.span(namespace, after)
        entries = self.entries
        if matches is None:
            end = hi if limit is None else min(hi, lo + limit)
            selected = list(entries[lo:end])
            if end >= hi:
                return Page(selected, None, None)
            return Page(selected, self.keys[end - 1], (hi - end) if count_remaining else None)
        selected = []
        i, last = lo, lo
        while i < hi:
            entry = entries[i]
            i += 1
            if matches(entry):
                if limit is not None and len(selected) == limit:
                    # One more match exists: the page is full and has a continuation.
                    return Page(selected, self.keys[last], None)
                selected.append(entry)
                last = i - 1
        return Page(selected, None, None)


class SnapshotCache:
    """Recent snapshots by (store key, revision): at most ``capacity``, none
    unused for more than ``ttl`` seconds. Thread-safe."""

    def __init__(
        self,
        capacity: int | None = None,
        ttl: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        env = os.environ.get
        self._clock = clock
        self.capacity = capacity if capacity is not None else int(env("KAPI_LIST_SNAPSHOTS", "8"))
        self.ttl = ttl if ttl is not None else float(env("KAPI_LIST_SNAPSHOT_SECONDS", "60"))
        self._items: OrderedDict[tuple[Any, int], tuple[float, Snapshot]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def put(self, key: Any, snapshot: Snapshot) -> None:
        if self.capacity <= 0:
            return
        with self._lock:
            self._expire(self._clock())
            self._items[(key, snapshot.revision)] = (self._clock(), snapshot)
            self._items.move_to_end((key, snapshot.revision))
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)

    def get(self, key: Any, revision: int) -> Snapshot | None:
        now = self._clock()
        with self._lock:
            self._expire(now)
            item = self._items.get((key, revision))
            if item is None:
                return None
            # Used again: it lives ``ttl`` more seconds (the order stays by last use).
            self._items[(key, revision)] = (now, item[1])
            self._items.move_to_end((key, revision))
            return item[1]

    def _expire(self, now: float) -> None:
        # Oldest first (insertion order, refreshed by put): stop at the first live one.
        while self._items:
            (key, (made, _snapshot)) = next(iter(self._items.items()))
            if now - made <= self.ttl:
                break
            del self._items[key]
