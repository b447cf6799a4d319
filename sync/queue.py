"""The sync's work queue: intent in PostgreSQL, Celery only to run it sooner.

``request`` records that an item (a Sync or a GitRepository) must run and
enqueues its task after commit. ``run`` executes one item under a
PostgreSQL advisory lock on its row id, so runs of one item never overlap
across workers, and a killed worker's lock goes with its connection. A run
remembers the request count it started from; requests that arrive meanwhile
leave ``requested > handled`` and the item is enqueued again when the run
ends. ``sweep`` claims due items with a conditional UPDATE on
``enqueued_at``, so each is enqueued once, and again only when the claim is
stale (the worker died with the message).

No beat reads the table every second: each due time set here (a periodic
run, a retry's backoff, a claim that turns stale) arms the sync's timer
(``kapi.duetimer``), whose task sweeps and re-arms for ``next_due_in()``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import connection, transaction

from kapi.observability.context import (
    current_request_id,
    reset_request_id,
    set_request_id,
)

__all__ = [
    "REPOSITORY", "SYNC", "TIMER", "arm_timer", "forget", "next_due_in", "request", "run",
    "sweep", "try_lock", "unlock",
]

REPOSITORY = "GitRepository"
SYNC = "Sync"
#: A claim older than this is re-enqueued (the message was lost with its worker).
STALE_SECONDS = 8
MAX_BACKOFF = 300.0
#: The name of the sync's timer (``kapi.duetimer``).
TIMER = "sync"
log = logging.getLogger(__name__)

_UPSERT = """
INSERT INTO sync_work_item (kind, namespace, name, requested, handled, reason, drift, due_at,
                            enqueued_at, failures, request_id)
VALUES (%s, %s, %s, 1, 0, %s, %s, now(), now(), 0, %s)
ON CONFLICT (kind, namespace, name) DO UPDATE
  SET requested = sync_work_item.requested + 1,
      reason = EXCLUDED.reason,
      request_id = EXCLUDED.request_id,
      drift = sync_work_item.drift OR EXCLUDED.drift,
      enqueued_at = CASE
        WHEN sync_work_item.enqueued_at IS NULL
          OR sync_work_item.enqueued_at < now() - make_interval(secs => %s)
        THEN now() ELSE sync_work_item.enqueued_at END
RETURNING (xmax = 0) OR enqueued_at = now()
"""


def _enqueue(kind: str, namespace: str, name: str, request_id: str = "") -> None:
    from kapi.observability.tasks import REQUEST_ID_MESSAGE_HEADER
    from sync import tasks

    task = tasks.reconcile_repository if kind == REPOSITORY else tasks.reconcile_sync
    # The request behind it travels in the message (its task log line), not
    # whatever request or task happens to enqueue it.
    headers = {REQUEST_ID_MESSAGE_HEADER: request_id}
    transaction.on_commit(lambda: task.apply_async((namespace, name), headers=headers))


def request(kind: str, namespace: str, name: str, reason: str, drift: bool = False,
            request_id: str | None = None) -> None:
    """Record that the item must run (again) and enqueue it unless already queued.

    ``request_id``: the API request behind it (default: the current one); the
    run makes it current, so its log lines carry it."""
    if request_id is None:
        request_id = current_request_id()
    with connection.cursor() as cur:
        cur.execute(_UPSERT, [kind, namespace, name, reason[:32], drift, request_id[:128],
                              STALE_SECONDS])
        (claimed,) = cur.fetchone()
    if claimed:
        _enqueue(kind, namespace, name, request_id)
        arm_timer(STALE_SECONDS)  # in case the message is lost with its worker


def forget(kind: str, namespace: str, name: str) -> None:
    with connection.cursor() as cur:
        cur.execute("DELETE FROM sync_work_item WHERE kind = %s AND namespace = %s AND name = %s",
                    [kind, namespace, name])


def _lock_key(kind: str, item_id: int) -> tuple[int, int]:
    return (0x5359 if kind == SYNC else 0x4752), item_id


def try_lock(kind: str, item_id: int) -> bool:
    with connection.cursor() as cur:
        cur.execute("SELECT pg_try_advisory_lock(%s, %s)", list(_lock_key(kind, item_id)))
        return bool(cur.fetchone()[0])


def unlock(kind: str, item_id: int) -> None:
    with connection.cursor() as cur:
        cur.execute("SELECT pg_advisory_unlock(%s, %s)", list(_lock_key(kind, item_id)))


def run(kind: str, namespace: str, name: str,
        work: Callable[[str, str, str, bool], float | None]) -> None:
    """Run ``work(namespace, name, reason, drift)`` for one item, never concurrently
    with another run of it; ``work`` returns seconds until its next periodic run."""
    with connection.cursor() as cur:
        cur.execute("SELECT id FROM sync_work_item WHERE kind = %s AND namespace = %s AND name = %s",
                    [kind, namespace, name])
        row = cur.fetchone()
    if row is None:
        request(kind, namespace, name, "enqueued")
        return
    item_id = row[0]
    if not try_lock(kind, item_id):
        return  # running elsewhere; that run re-enqueues if requested meanwhile
    try:
        with connection.cursor() as cur:
            cur.execute(
                """UPDATE sync_work_item w SET drift = false FROM
                     (SELECT id, drift FROM sync_work_item WHERE id = %s FOR UPDATE) old
                   WHERE w.id = old.id
                   RETURNING w.requested, w.reason, old.drift, w.failures, w.request_id,
                             w.handled""",
                [item_id],
            )
            row = cur.fetchone()
        if row is None:
            return
        started, reason, drift, failures, request_id, handled = row
        # The run's log lines carry the request behind it (none for periodic runs).
        token = set_request_id(request_id if started > handled else "")
        try:
            next_in = work(namespace, name, reason, drift)
            failures = 0
        except Exception:
            log.exception("sync: %s %s/%s failed", kind, namespace, name)
            failures += 1
            next_in = min(MAX_BACKOFF, 2.0 ** min(failures, 9))
        finally:
            reset_request_id(token)
            if drift:
                with connection.cursor() as cur:
                    cur.execute("UPDATE sync_work_item SET drift = true WHERE id = %s", [item_id])
        with connection.cursor() as cur:
            cur.execute(
                """UPDATE sync_work_item
                   SET handled = %s, failures = %s,
                       due_at = CASE WHEN %s::float8 IS NULL THEN NULL
                                     ELSE now() + make_interval(secs => %s::float8) END,
                       enqueued_at = CASE WHEN requested > %s THEN now() ELSE NULL END
                   WHERE id = %s RETURNING requested > %s""",
                [started, failures, next_in, next_in, started, item_id, started],
            )
            again = cur.fetchone()
        if again and again[0]:
            _enqueue(kind, namespace, name)
            arm_timer(STALE_SECONDS)
        elif next_in is not None:
            arm_timer(next_in)
    finally:
        unlock(kind, item_id)


def sweep() -> int:
    """Enqueue every due or owed item not already queued; returns how many."""
    with connection.cursor() as cur:
        cur.execute(
            """UPDATE sync_work_item SET enqueued_at = now()
               WHERE (requested > handled OR due_at <= now())
                 AND (enqueued_at IS NULL OR enqueued_at < now() - make_interval(secs => %s))
               RETURNING kind, namespace, name""",
            [STALE_SECONDS],
        )
        rows = cur.fetchall()
    for kind, namespace, name in rows:
        _enqueue(kind, namespace, name)
    return len(rows)


def next_due_in() -> float | None:
    """Seconds until ``sweep`` has something to do (0: now), None if never:
    the earliest periodic run or retry, owed run not yet queued, or claim
    that turns stale."""
    with connection.cursor() as cur:
        cur.execute(
            """SELECT EXTRACT(EPOCH FROM min(
                 CASE WHEN enqueued_at IS NOT NULL
                        THEN enqueued_at + make_interval(secs => %s)
                      WHEN requested > handled THEN now()
                      ELSE due_at END) - now())::float8
               FROM sync_work_item
               WHERE enqueued_at IS NOT NULL OR requested > handled OR due_at IS NOT NULL""",
            [STALE_SECONDS],
        )
        row = cur.fetchone()
    return None if row is None or row[0] is None else max(0.0, float(row[0]))


def arm_timer(seconds: float) -> None:
    """Have the sync's timer sweep in ``seconds`` (unless it fires sooner)."""
    from kapi import duetimer
    from sync import tasks

    duetimer.arm(TIMER, tasks.sweep, seconds)
