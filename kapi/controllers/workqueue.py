"""The work table: request a key, claim due keys, finish or requeue them.

After client-go's ``util/workqueue``, in PostgreSQL (``kapi_work_item``, one
row per (controller, key)), so any number of worker processes share it and a
killed one loses nothing:

* **request** inserts the key, due now; requesting a key that is there bumps
  its ``generation`` and makes it due now, so a run in progress that finishes
  keeps the row for another pass instead of losing the new request.
* **claim** is a conditional UPDATE over rows picked with ``FOR UPDATE SKIP
  LOCKED`` in due order: workers never take the same row nor wait on each
  other. A claim is a lease of ``LEASE_SECONDS``: one key runs in one place at
  a time, and a killed worker's lease simply expires (the key is claimable
  again).
  Every claim has a token (``holder``): finishing, requeueing, releasing and
  extending act only on rows still held by it, so a worker whose lease ran
  out never undoes the next holder's claim. A long reconcile ``extend``s its
  lease while it runs.
* **finish** deletes the row unless it was requested meanwhile; **requeue**
  makes it due again later (``requeue_after``, or the backoff of an error);
  **release** hands back claims not started; **forget** drops a key whose
  object is gone.
* **hints** of the requests (a set of words, such as the sync's "drift") are
  handed to the run that claims them, and kept for the next run if it fails.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterable, Sequence

from django.db import connection

from kapi.controllers.controller import Item
from kapi.observability.context import current_request_id

__all__ = [
    "LEASE_SECONDS",
    "Request",
    "any_due",
    "backoff",
    "claim",
    "extend",
    "failing",
    "finish",
    "forget",
    "next_wait",
    "release",
    "request",
    "requeue",
]

LEASE_SECONDS = float(os.environ.get("KAPI_CONTROLLER_LEASE_SECONDS", "20"))

#: ``(controller, key, group, resource, namespace, name, argument[, request_id])``
Request = tuple

_INSERT = (
    'INSERT INTO kapi_work_item (controller, key, "group", resource, namespace, name, argument,'
    " request_id, hints, generation, attempts, due)"
    " SELECT c, k, g, r, ns, n, a, q, %s::varchar[], 0, 0, now()"
    " FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[],"
    " %s::text[], %s::text[]) AS t(c, k, g, r, ns, n, a, q)"
)
_BUMP = """
ON CONFLICT (controller, key) DO UPDATE
  SET generation = kapi_work_item.generation + 1,
      due = LEAST(kapi_work_item.due, now()),
      hints = ARRAY(SELECT DISTINCT unnest(kapi_work_item.hints || EXCLUDED.hints)),
      request_id = CASE WHEN EXCLUDED.request_id <> '' THEN EXCLUDED.request_id
                        ELSE kapi_work_item.request_id END
"""
_KEEP = " ON CONFLICT (controller, key) DO NOTHING"


def request(rows: Iterable[Request], *, bump: bool = True, hints: Sequence[str] = ()) -> int:
    """Request keys; a row without a request id gets the current one (the
    request, or the item being reconciled, that asks). ``bump`` False leaves
    keys already there alone (the safety-net resyncs). ``hints`` are added to
    each key's. Returns how many rows it inserted or bumped."""
    current = current_request_id()
    unique = {}
    for row in rows:
        row = (row[0], str(row[1]), *row[2:])
        unique[row[:2]] = row if len(row) == 8 else (*row, current)
    if not unique:
        return 0
    columns = list(zip(*unique.values(), strict=True))
    with connection.cursor() as cur:
        cur.execute(
            _INSERT + (_BUMP if bump else _KEEP), [list(hints), *[list(c) for c in columns]]
        )
        return cur.rowcount


# The hints are handed to the claimant and cleared (``picked`` holds them as
# they were: RETURNING shows the row after the update).
_CLAIM = """
UPDATE kapi_work_item w
SET claimed_until = now() + make_interval(secs => %s), attempts = w.attempts + 1,
    holder = %s, hints = '{}'
FROM (
  SELECT id, hints FROM kapi_work_item
  WHERE due <= now() AND (claimed_until IS NULL OR claimed_until < now())
    AND (controller = ANY(%s)) = %s
  ORDER BY due, id
  LIMIT %s
  FOR UPDATE SKIP LOCKED
) picked
WHERE w.id = picked.id
RETURNING w.id, w.controller, w.key, w."group", w.resource, w.namespace, w.name, w.argument,
          w.generation, w.attempts, w.request_id, picked.hints, w.holder::text
"""


def claim(limit: int, controllers: Sequence[str], *, only: bool = False) -> list[Item]:
    """Lease up to ``limit`` due keys, in due order: of ``controllers`` with
    ``only``, else of any other controller."""
    with connection.cursor() as cur:
        cur.execute(_CLAIM, [LEASE_SECONDS, uuid.uuid4(), list(controllers), only, limit])
        return [Item(*row) for row in cur.fetchall()]


def _held(items: list[Item]) -> tuple[list[int], list[str]]:
    return [i.id for i in items], [i.holder for i in items]


def finish(items: list[Item]) -> None:
    """Done: delete each row unless it was requested again meanwhile (then
    release it, due at once)."""
    if not items:
        return
    with connection.cursor() as cur:
        cur.execute(
            "DELETE FROM kapi_work_item w"
            " USING unnest(%s::bigint[], %s::int[], %s::uuid[]) AS t(id, gen, holder)"
            " WHERE w.id = t.id AND w.generation = t.gen AND w.holder = t.holder",
            [[i.id for i in items], [i.generation for i in items], [i.holder for i in items]],
        )
    release(items)


def release(items: list[Item]) -> None:
    """Give up the lease on rows still there and held (due as they were)."""
    if not items:
        return
    with connection.cursor() as cur:
        cur.execute(
            "UPDATE kapi_work_item w SET claimed_until = NULL, holder = NULL"
            " FROM unnest(%s::bigint[], %s::uuid[]) AS t(id, holder)"
            " WHERE w.id = t.id AND w.holder = t.holder",
            list(_held(items)),
        )


def extend(items: list[Item]) -> None:
    """Renew the lease of ``items`` (their reconcile is still running)."""
    if not items:
        return
    with connection.cursor() as cur:
        cur.execute(
            "UPDATE kapi_work_item w SET claimed_until = now() + make_interval(secs => %s)"
            " FROM unnest(%s::bigint[], %s::uuid[]) AS t(id, holder)"
            " WHERE w.id = t.id AND w.holder = t.holder",
            [LEASE_SECONDS, *_held(items)],
        )


def requeue(item: Item, seconds: float, *, failed: bool = False) -> None:
    """Release ``item``, due in ``seconds``; due at once if it was requested
    again meanwhile (that request must not wait). A run that succeeded
    resets the attempts (the next error backs off from the start) and the
    request id (the next periodic run was asked for by no request); one that
    ``failed`` gives its hints back to the next run."""
    with connection.cursor() as cur:
        cur.execute(
            "UPDATE kapi_work_item SET claimed_until = NULL, holder = NULL,"
            " due = CASE WHEN generation = %s THEN now() + make_interval(secs => %s)"
            "  ELSE now() END,"
            " attempts = CASE WHEN %s THEN attempts ELSE 0 END,"
            " request_id = CASE WHEN %s OR generation <> %s THEN request_id ELSE '' END,"
            " hints = CASE WHEN %s THEN ARRAY(SELECT DISTINCT unnest(hints || %s::varchar[]))"
            "  ELSE hints END"
            " WHERE id = %s AND holder = %s",
            [item.generation, seconds, failed, failed, item.generation, failed,
             list(item.hints), item.id, item.holder],
        )


def forget(controller: str, key: str) -> None:
    """Drop ``key`` of ``controller`` (its object is gone), claimed or not."""
    with connection.cursor() as cur:
        cur.execute(
            "DELETE FROM kapi_work_item WHERE controller = %s AND key = %s", [controller, key]
        )


def backoff(attempts: int, base: float, most: float) -> float:
    """Seconds before a key that failed its ``attempts``-th run runs again:
    ``base * 2**attempts``, at most ``most``."""
    return min(most, base * 2 ** min(attempts, 16))


def failing(controller: str, namespace: str, attempts: int) -> int:
    """How many keys of ``controller`` about objects in ``namespace`` have
    been tried at least ``attempts`` times without finishing."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT count(*) FROM kapi_work_item WHERE controller = %s AND namespace = %s"
            " AND attempts >= %s",
            [controller, namespace, attempts],
        )
        return cur.fetchone()[0]


def any_due() -> bool:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT EXISTS (SELECT 1 FROM kapi_work_item WHERE due <= now()"
            " AND (claimed_until IS NULL OR claimed_until < now()))"
        )
        return bool(cur.fetchone()[0])


def next_wait() -> float | None:
    """Seconds until the first key that is not due yet becomes due (or its
    lease runs out), None if there is none. Keys due already are the
    workers' (``wakeup.wake_workers``), not the timer's."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT EXTRACT(EPOCH FROM min(t) - now())::float8 FROM ("
            " SELECT GREATEST(due, COALESCE(claimed_until, due)) AS t FROM kapi_work_item"
            ") w WHERE t > now()"
        )
        row = cur.fetchone()
    return None if row is None or row[0] is None else float(row[0])
