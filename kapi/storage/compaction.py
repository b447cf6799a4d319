"""Compaction of the change log: keep a history window, answer 410 below it.

Like etcd's periodic compactor, each run records a *mark* (the horizon now,
with the time) and compacts to the newest mark older than the window. So the
compacted revision always trails the horizon by at least the window and is
found without scanning the log by time.

Compacting to ``C`` keeps what a list at any revision ``>= C`` needs: for every
key, its newest change at or below ``C`` (its state at ``C``), unless that is a
deletion, and every change above ``C``. It deletes the rest: superseded
changes and tombstones at or below ``C``.

The work goes in *steps*, each one short transaction, never one transaction
for the whole window: a transaction that holds a transaction id makes
``kapi_rv_horizon()`` wait, and every consistent read waits on the horizon
(issue #20: one statement deleting the changes of a purged 10,000-object
namespace ran for minutes, and every request of every tenant waited 10 s on
it, then failed). A step takes the next ``STEP`` changes after the marker,
``(lo, hi]`` in version order, deletes every older change of their keys and
those of them that are deletions, and moves the marker to ``hi``, all in one
transaction. By induction the log is then exactly compacted to ``hi``: rows
at or below ``lo`` were handled by earlier steps, and a row at or below
``hi`` superseded by a change at or below ``hi`` is superseded by one in
``(lo, hi]`` or was already gone. Readers check the marker after reading
(``PostgresStorage.list``, the watch catch-up) and answer 410 Expired when they
asked for history below it, exactly as with one big step.

Between steps the compactor sleeps as long as the step took (it yields half of
its time to foreground requests), and a run stops after ``RUN_SECONDS``; the
next run (beat, every 30 s) goes on from the marker. One compactor runs at a
time (a session advisory lock taken without waiting).
"""

from __future__ import annotations

import os
import time

from django.db import connection, transaction

__all__ = ["RUN_SECONDS", "STEP", "compact", "compact_step", "record_mark"]

#: Changes read per step; each step is one short transaction.
STEP = int(os.environ.get("KAPI_COMPACTION_STEP", "1000"))
#: A run stops after this long (well within a worker's warm shutdown); the next
#: run goes on from the marker.
RUN_SECONDS = 5.0

_LOCK_KEY = 0x6B617069_636F  # "kapi" "co"

_MARK = """
INSERT INTO kapi_compaction_mark (revision, at) VALUES (kapi_rv_horizon(), now())
ON CONFLICT (revision) DO NOTHING
"""

_TARGET = """
SELECT max(revision) FROM kapi_compaction_mark WHERE at <= now() - make_interval(secs => %s)
"""

#: The upper end of the next step: the STEP-th change after the marker, or the target.
_STEP_END = """
SELECT resource_version FROM kapi_change
WHERE resource_version > %s AND resource_version <= %s
ORDER BY resource_version OFFSET %s LIMIT 1
"""

#: Every change superseded by one in (lo, hi], and the deletions in (lo, hi].
#: The step's rows drive a nested loop over the key index (kapi_change_key_rv).
_DELETE = """
DELETE FROM kapi_change c
USING (
  SELECT "group", resource, namespace, name, resource_version, type FROM kapi_change
  WHERE resource_version > %(lo)s AND resource_version <= %(hi)s
) s
WHERE c."group" = s."group" AND c.resource = s.resource
  AND c.namespace = s.namespace AND c.name = s.name
  AND (c.resource_version < s.resource_version
       OR (c.resource_version = s.resource_version AND s.type = 'DELETED'))
"""


def record_mark() -> None:
    with connection.cursor() as cur:
        cur.execute(_MARK)


def _target(window_seconds: float) -> int | None:
    with connection.cursor() as cur:
        cur.execute(_TARGET, [window_seconds])
        (target,) = cur.fetchone()
    return None if target is None else int(target)


def compact_step(target: int, step: int = STEP) -> tuple[int, int] | None:
    """Compact the next ``step`` changes after the marker, up to ``target``, in
    one transaction. Returns (compacted revision, change rows deleted), or None
    when the marker is already at or past ``target``."""
    with transaction.atomic(), connection.cursor() as cur:
        # The row lock serialises steps (a second compactor, a test); it is
        # held for one step only.
        cur.execute("SELECT revision FROM kapi_compaction WHERE id = 1 FOR UPDATE")
        (lo,) = cur.fetchone()
        if lo >= target:
            return None
        cur.execute(_STEP_END, [lo, target, step - 1])
        row = cur.fetchone()
        hi = int(row[0]) if row else target
        cur.execute("UPDATE kapi_compaction SET revision = %s WHERE id = 1", [hi])
        cur.execute(_DELETE, {"lo": lo, "hi": hi})
        deleted = cur.rowcount
    return hi, deleted


def compact(window_seconds: float, run_seconds: float = RUN_SECONDS) -> tuple[int, int]:
    """Record a mark and compact towards the newest mark older than the window,
    in steps, for at most ``run_seconds``.

    Returns (compacted revision, change rows deleted by this run)."""
    record_mark()
    with connection.cursor() as cur:
        cur.execute("SELECT pg_try_advisory_lock(%s)", [_LOCK_KEY])
        if not cur.fetchone()[0]:
            cur.execute("SELECT revision FROM kapi_compaction WHERE id = 1")
            return int(cur.fetchone()[0]), 0  # another compactor is at it
    deleted = 0
    try:
        target = _target(window_seconds)
        started = time.monotonic()
        while target is not None and time.monotonic() - started < run_seconds:
            began = time.monotonic()
            done = compact_step(target)
            if done is None:
                break
            deleted += done[1]
            # Yield: as long idle as the step was busy.
            time.sleep(min(1.0, time.monotonic() - began))
        with connection.cursor() as cur:
            cur.execute("DELETE FROM kapi_compaction_mark WHERE revision < "
                        "(SELECT revision FROM kapi_compaction WHERE id = 1)")
            cur.execute("SELECT revision FROM kapi_compaction WHERE id = 1")
            (compacted,) = cur.fetchone()
    finally:
        with connection.cursor() as cur:
            cur.execute("SELECT pg_advisory_unlock(%s)", [_LOCK_KEY])
    return int(compacted), deleted
