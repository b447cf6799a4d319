"""Compaction of the change log: keep a history window, answer 410 below it.

Like etcd's periodic compactor, each run records a *mark* (the horizon now,
with the time) and compacts to the newest mark older than the window. So the
compacted revision always trails the horizon by at least the window and is
found without scanning the log by time.

Compacting to ``C`` keeps what a list at any revision ``>= C`` needs: for every
key, its newest change at or below ``C`` (its state at ``C``), unless that is a
deletion, and every change above ``C``. It deletes the rest: superseded
changes and tombstones at or below ``C``. Only keys written since the last
compaction can have anything left to delete, so a run reads only those.
The marker ``kapi_compaction.revision`` moves in the same transaction as the
deletion; readers check it after reading (``PostgresStorage.list``, the watch
catch-up) and answer 410 Expired when they asked for history below it.
"""

from __future__ import annotations

from django.db import connection, transaction

__all__ = ["compact", "record_mark"]

_MARK = """
INSERT INTO kapi_compaction_mark (revision, at) VALUES (kapi_rv_horizon(), now())
ON CONFLICT (revision) DO NOTHING
"""

_TARGET = """
SELECT max(revision) FROM kapi_compaction_mark WHERE at <= now() - make_interval(secs => %s)
"""

_DELETE = """
WITH keys AS (
  SELECT DISTINCT "group", resource, namespace, name FROM kapi_change
  WHERE resource_version > %(old)s AND resource_version <= %(new)s
),
newest AS (
  SELECT DISTINCT ON (c."group", c.resource, c.namespace, c.name) c.resource_version, c.type
  FROM kapi_change c JOIN keys k USING ("group", resource, namespace, name)
  WHERE c.resource_version <= %(new)s
  ORDER BY c."group", c.resource, c.namespace, c.name, c.resource_version DESC
)
DELETE FROM kapi_change c USING keys k
WHERE c."group" = k."group" AND c.resource = k.resource
  AND c.namespace = k.namespace AND c.name = k.name
  AND c.resource_version <= %(new)s
  AND NOT EXISTS (
    SELECT 1 FROM newest n WHERE n.resource_version = c.resource_version AND n.type <> 'DELETED'
  )
"""


def record_mark() -> None:
    with connection.cursor() as cur:
        cur.execute(_MARK)


def compact(window_seconds: float) -> tuple[int, int]:
    """Record a mark and compact to the newest mark older than the window.

    Returns (compacted revision, change rows deleted). Safe to run
    concurrently: the compaction row is locked for the duration.
    """
    record_mark()
    with transaction.atomic(), connection.cursor() as cur:
        cur.execute("SELECT revision FROM kapi_compaction WHERE id = 1 FOR UPDATE")
        (old,) = cur.fetchone()
        cur.execute(_TARGET, [window_seconds])
        (new,) = cur.fetchone()
        if new is None or new <= old:
            return int(old), 0
        cur.execute("UPDATE kapi_compaction SET revision = %s WHERE id = 1", [new])
        cur.execute(_DELETE, {"old": old, "new": new})
        deleted = cur.rowcount
        cur.execute("DELETE FROM kapi_compaction_mark WHERE revision < %s", [new])
    return int(new), deleted
