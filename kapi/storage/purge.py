"""Asking for the deletion of a namespace's content, in bulk, on PostgreSQL.

A terminating namespace gets one ``delete`` work item (``kapi.controllers``'
``kapi_work_item``) per object it holds. With 10,000 objects that is the
purge's hot statement (bench/README.md, "Purging a big namespace"), so it is
one ``INSERT … SELECT`` from ``kapi_object`` into the work table, not a read
and a write per object. It needs the objects and the work table in one
database, so it is a function of this PostgreSQL module and not a ``Storage``
method.

Keyset batches of ``batch`` rows, each statement its own short transaction
(issue #20: one INSERT of 10,000 items held its transaction, and with it
every consistent read, for half a second); each batch starts after the last
key the previous one asked for, not from the start again.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection

from kapi.storage.interface import GroupResource

__all__ = ["ask_deletes"]

# Objects already asked for are skipped by the index, not by conflicts.
_ASK = """
INSERT INTO kapi_work_item (controller, key, "group", resource, namespace, name,
                            argument, request_id, generation, attempts, due)
SELECT 'delete', uid::text, "group", resource, namespace, name, %s, %s, 0, 0, now()
FROM kapi_object
WHERE namespace = %s
  AND ("group", resource) IN (SELECT * FROM unnest(%s::text[], %s::text[]))
  AND ("group", resource, name) > (%s, %s, %s)
  AND NOT (data->'metadata' ? 'deletionTimestamp')
  AND NOT EXISTS (SELECT 1 FROM kapi_work_item w
                  WHERE w.controller = 'delete' AND w.key = kapi_object.uid::text)
ORDER BY "group", resource, name LIMIT %s
ON CONFLICT (controller, key) DO NOTHING
RETURNING "group", resource, name
"""


def ask_deletes(
    namespace: str,
    collections: Sequence[GroupResource],
    *,
    propagation: str = "Background",
    request_id: str = "",
    batch: int = 1000,
    batches: int = 100,
) -> int:
    """Request a ``delete`` work item (argument ``propagation``, request
    ``request_id``) for every object of ``collections`` in ``namespace`` that
    is not being deleted nor asked for already, at most ``batches`` statements
    of ``batch`` rows. Returns how many it asked for."""
    types = [[g for g, _ in collections], [r for _, r in collections]]
    asked = 0
    after: tuple[str, str, str] = ("", "", "")
    with connection.cursor() as cur:
        for _ in range(batches):
            cur.execute(_ASK, [propagation, request_id, namespace, *types, *after, batch])
            rows = cur.fetchall()
            asked += len(rows)
            if len(rows) < batch:
                break
            after = max(tuple(r) for r in rows)
    return asked
