"""The work table: ask for an item, claim due items, finish or postpone them.

Claims are a conditional UPDATE over rows picked with ``FOR UPDATE SKIP LOCKED``
in id order, so several workers never take the same row and never wait on each
other; a claim lasts ``CLAIM_SECONDS`` and a dead worker's claim simply expires
(the stale claim is released by being claimable again). Asking again for an item
that exists bumps its ``generation`` and makes it due now, so a claimant that
finishes keeps the row for another pass instead of losing the new request.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from django.db import connection

from kapi.observability.context import current_request_id

__all__ = [
    "CLAIM_SECONDS",
    "Item",
    "any_due",
    "claim",
    "finish",
    "next_wait",
    "postpone",
    "release",
    "request",
    "request_dependents",
]

CLAIM_SECONDS = float(os.environ.get("KAPI_LIFECYCLE_CLAIM_SECONDS", "20"))


@dataclass
class Item:
    id: int
    kind: str
    uid: str
    group: str
    resource: str
    namespace: str
    name: str
    policy: str
    generation: int
    attempts: int
    request_id: str = ""


_UPSERT_TAIL = """
ON CONFLICT (kind, uid) DO UPDATE
  SET generation = kapi_lifecycle_work.generation + 1,
      due = LEAST(kapi_lifecycle_work.due, now()),
      request_id = CASE WHEN EXCLUDED.request_id <> '' THEN EXCLUDED.request_id
                        ELSE kapi_lifecycle_work.request_id END
"""
_KEEP_TAIL = " ON CONFLICT (kind, uid) DO NOTHING"


def request(rows: list[tuple], *, bump: bool = True) -> int:
    """Ask for items ``(kind, uid, group, resource, namespace, name, policy[,
    request_id])``; without a request id, the current one (the request, or the
    item being handled, that asks).

    ``bump`` False leaves existing items alone (the safety-net sweeps)."""
    current = current_request_id()
    unique = {}
    for row in rows:
        unique[(row[0], row[1])] = row if len(row) == 8 else (*row, current)
    if not unique:
        return 0
    columns = list(zip(*unique.values(), strict=True))
    sql = (
        'INSERT INTO kapi_lifecycle_work (kind, uid, "group", resource, namespace, name, policy,'
        " request_id, generation, attempts, due)"
        " SELECT k, u::uuid, g, r, ns, n, p, q, 0, 0, now()"
        " FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[],"
        " %s::text[], %s::text[]) AS t(k, u, g, r, ns, n, p, q)"
    ) + (_UPSERT_TAIL if bump else _KEEP_TAIL)
    with connection.cursor() as cur:
        cur.execute(sql, [list(c) for c in columns])
        return cur.rowcount


def request_dependents(owner_uids: list[str], request_id: str | None = None) -> int:
    """Ask to check (``attempt``) every dependent of ``owner_uids``: one statement."""
    if not owner_uids:
        return 0
    sql = (
        'INSERT INTO kapi_lifecycle_work (kind, uid, "group", resource, namespace, name, policy,'
        " request_id, generation, attempts, due)"
        " SELECT 'attempt', uid, \"group\", resource, namespace, name, '', %s, 0, 0, now()"
        " FROM kapi_object"
        " WHERE data->'metadata' ? 'ownerReferences' AND kapi_owner_uids(data) && %s::text[]"
    ) + _UPSERT_TAIL
    if request_id is None:
        request_id = current_request_id()
    with connection.cursor() as cur:
        cur.execute(sql, [request_id, list(owner_uids)])
        return cur.rowcount


_CLAIM = """
UPDATE kapi_lifecycle_work w
SET claimed_until = now() + make_interval(secs => %s), attempts = w.attempts + 1
FROM (
  SELECT id FROM kapi_lifecycle_work
  WHERE due <= now() AND (claimed_until IS NULL OR claimed_until < now())
  ORDER BY due, id
  LIMIT %s
  FOR UPDATE SKIP LOCKED
) picked
WHERE w.id = picked.id
RETURNING w.id, w.kind, w.uid::text, w."group", w.resource, w.namespace, w.name, w.policy,
          w.generation, w.attempts, w.request_id
"""


def claim(limit: int) -> list[Item]:
    with connection.cursor() as cur:
        cur.execute(_CLAIM, [CLAIM_SECONDS, limit])
        rows = cur.fetchall()
    items = [Item(*row) for row in rows]
    # Namespace items first (they ask for more work), then in id order.
    items.sort(key=lambda i: (i.kind != "namespace", i.id))
    return items


def finish(items: list[Item]) -> None:
    """Done: delete each row unless it was asked for again meanwhile (then release it)."""
    if not items:
        return
    with connection.cursor() as cur:
        cur.execute(
            "DELETE FROM kapi_lifecycle_work w USING unnest(%s::bigint[], %s::int[]) AS t(id, gen)"
            " WHERE w.id = t.id AND w.generation = t.gen",
            [[i.id for i in items], [i.generation for i in items]],
        )
    release(items)


def release(items: list[Item]) -> None:
    """Give up the claim on rows still there, due at once."""
    if not items:
        return
    with connection.cursor() as cur:
        cur.execute(
            "UPDATE kapi_lifecycle_work SET claimed_until = NULL WHERE id = ANY(%s::bigint[])",
            [[i.id for i in items]],
        )


def postpone(item: Item, seconds: float) -> None:
    with connection.cursor() as cur:
        cur.execute(
            "UPDATE kapi_lifecycle_work SET claimed_until = NULL,"
            " due = CASE WHEN generation = %s THEN now() + make_interval(secs => %s) ELSE now() END"
            " WHERE id = %s",
            [item.generation, seconds, item.id],
        )


def any_due() -> bool:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT EXISTS (SELECT 1 FROM kapi_lifecycle_work WHERE due <= now()"
            " AND (claimed_until IS NULL OR claimed_until < now()))"
        )
        return bool(cur.fetchone()[0])


def next_wait() -> float | None:
    """Seconds until the first item that is not due yet becomes due (or its
    claim runs out), None if there is none. Items due already are the
    workers' (``wakeup.wake_workers``), not the timer's."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT EXTRACT(EPOCH FROM min(t) - now())::float8 FROM ("
            " SELECT GREATEST(due, COALESCE(claimed_until, due)) AS t FROM kapi_lifecycle_work"
            ") w WHERE t > now()"
        )
        row = cur.fetchone()
    return None if row is None or row[0] is None else float(row[0])
