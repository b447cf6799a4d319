"""Change feeds: turn new entries of the change log into requested keys.

A ``Watch`` is one controller module's mapping from changes to keys: for each
batch of changes the feed asks it for a ``Plan``, adds every change to it and
then has it request its keys (``workqueue.request``), all in ONE transaction
with the move of the feed's durable cursor (``Storage.advance_feed``): a crash
keeps both or neither. Watches name their feed; the watches of one feed share
its cursor and its reads.

One run of a feed at a time (a session advisory lock, released by PostgreSQL
if the worker dies). Writers that matter wake a feed through its flag
(``kapi.wakeflag``, ``wake``); a burst of writes sends one run, and a run
checks the flag again when it stops. A feed that a stream of writes keeps
waking runs at most every ``PACE`` seconds; a backlog runs again at once.
When the cursor is missing or older than the compacted history, the feed asks
each watch to ``resync`` (rebuild its keys from the objects) instead.
"""

from __future__ import annotations

import logging
import time
import zlib
from collections.abc import Callable
from functools import cache

from django.db import connection, transaction

from kapi.controllers import wakeup
from kapi.controllers.controller import watches
from kapi.storage import default_storage
from kapi.storage.interface import Change, ChangeFilter
from kapi.wakeflag import WakeFlag, send_on_commit

__all__ = ["BATCH", "Plan", "Watch", "catch_up", "feeds", "run", "run_again", "wake"]

log = logging.getLogger(__name__)

BATCH = 1000

#: The least time between the starts of two runs of a feed that writes keep
#: waking while it runs. A run costs about the same whatever it reads (its
#: Celery task, eight statements, the horizon's wait for the writers in
#: flight): under a stream of deletes (tens a second, kbench's
#: watch-consistency) runs went back to back, each reading a handful of
#: changes, and the workers' CPU per write was a third of the API's. Paced,
#: a run reads what the last PACE brought; a write waits at most PACE more
#: for its controllers, and only while others keep the feed busy. The wait
#: is a Celery countdown (a message a worker holds that long, unlike the
#: due timers of ``kapi.duetimer``): a worker killed while holding it leaves
#: the flag set, and the safety sweep runs the feed.
PACE = 0.1


class Plan:
    """What one batch of changes asks for: ``add`` each change, then ``ask``."""

    def add(self, change: Change) -> None:
        raise NotImplementedError

    def ask(self) -> int:
        """Request the keys the changes map to; returns how many."""
        raise NotImplementedError


class Watch:
    """A controller module's mapping of changes to keys, on feed ``feed``."""

    def __init__(
        self,
        feed: str,
        plan: Callable[[], Plan],
        resync: Callable[[bool], int],
        select: ChangeFilter | None = None,
        reads: tuple[str, ...] | None = None,
    ) -> None:
        #: ``plan()`` makes a fresh Plan per batch. ``resync(full)`` requests,
        #: without bumping, every key the objects say is unfinished: the slow
        #: safety sweep; ``full`` also what only a change could have asked for
        #: (the history went past the cursor). Returns how many keys.
        #: ``select``: the changes it needs (None: all); ``reads``: the keys
        #: of their metadata its plans look at (None: all of it, and the
        #: status). A feed reads what any of its watches needs.
        self.feed, self.plan, self.resync, self.select = feed, plan, resync, select
        self.reads = reads


@cache
def feeds() -> dict[str, list[Watch]]:
    """The watches of every feed, by feed name."""
    found: dict[str, list[Watch]] = {}
    for watch in watches():
        found.setdefault(watch.feed, []).append(watch)
    return found


def _select(name: str) -> ChangeFilter | None:
    """What feed ``name`` reads: the union of its watches' filters."""
    selects = [w.select for w in feeds().get(name, ())]
    if not selects or any(s is None for s in selects):
        return None
    return ChangeFilter(
        groups=tuple(sorted({g for s in selects for g in s.groups})),
        labels=tuple(sorted({lab for s in selects for lab in s.labels})),
        resources=tuple(sorted({r for s in selects for r in s.resources})),
    )


def _reads(name: str) -> tuple[str, ...] | None:
    """The metadata keys feed ``name`` reads: the union of its watches'."""
    reads = [w.reads for w in feeds().get(name, ())]
    if not reads or any(r is None for r in reads):
        return None
    return tuple(sorted({key for r in reads for key in r}))


def _task():
    from kapi.controllers.tasks import process_changes

    return process_changes


@cache
def _flag(name: str) -> WakeFlag:
    return WakeFlag(name, lambda: _FeedTask(name), f"the {name} feed", _lock_key(name))


class _FeedTask:
    """What ``send_on_commit`` enqueues for feed ``name``, ``countdown``
    seconds later."""

    def __init__(self, name: str, countdown: float = 0.0) -> None:
        self.feed, self.countdown = name, countdown
        self.name = _task().name

    def delay(self) -> None:
        # Celery sends a countdown of 0 as no countdown.
        _task().apply_async((self.feed,), countdown=self.countdown)


def wake(name: str) -> None:
    """A write that matters to feed ``name``: run it after the commit (once per burst)."""
    _flag(name).wake()


def run_again(name: str, after: float = 0.0) -> None:
    """Enqueue feed ``name``, ``after`` seconds from now, without looking at
    its flag (``run`` asked for it)."""
    send_on_commit(_FeedTask(name, after))


def catch_up(name: str) -> bool:
    """``run`` feed ``name``, and enqueue its next run if it asks for one.
    Returns whether it did."""
    again = run(name)
    if again is None:
        return False
    run_again(name, again)
    return True


def _lock_key(name: str) -> int:
    return 0x6B617069_00000000 | zlib.crc32(name.encode())


def run(name: str, max_batches: int = 20) -> float | None:
    """Catch feed ``name`` up (at most ``max_batches``). Returns None when it
    is done, else in how many seconds it should run again: at once if there
    is more to read, after the rest of ``PACE`` if a wake came meanwhile."""
    started = time.monotonic()
    with connection.cursor() as cur:
        cur.execute("SELECT pg_try_advisory_lock(%s)", [_lock_key(name)])
        if not cur.fetchone()[0]:
            return None  # another run; it re-checks the flag when it stops
    try:
        more = False
        for _ in range(max_batches):
            if _one_batch(name) < BATCH:
                break
        else:
            more = True
    finally:
        with connection.cursor() as cur:
            cur.execute("SELECT pg_advisory_unlock(%s)", [_lock_key(name)])
    if more:
        return 0.0
    if _flag(name).wanted():
        return max(0.0, PACE - (time.monotonic() - started))
    return None


def _one_batch(name: str) -> int:
    _flag(name).clear()
    storage = default_storage()
    batch = storage.read_feed(name, BATCH, _select(name), _reads(name))
    if batch.expired:
        if batch.new:
            # A first start: nothing was missed, every key is read once.
            log.info("the %s feed starts: reading every object once", name)
        else:
            log.warning("change log compacted past the %s feed's cursor; resyncing", name)
        with transaction.atomic():
            for watch in feeds().get(name, ()):
                watch.resync(True)
            storage.advance_feed(name, batch.end)
        wakeup.wake_workers(2)
        return 0
    plans = [watch.plan() for watch in feeds().get(name, ())]
    for change in batch.changes:
        for plan in plans:
            plan.add(change)
    with transaction.atomic():
        asked = sum(plan.ask() for plan in plans)
        storage.advance_feed(name, batch.end)
    if asked:
        wakeup.wake_workers(2 if asked > 50 else 1)
    return len(batch.changes)
