"""Carrying a request's id to work that is derived from its writes later.

The deletion lifecycle and the sync do not get their work from the request
that caused it: scanners read the change log in a worker, for many writes at
once. So the request records, for each object it wrote that such a scanner
acts on, its request id (``record``: one upsert into ``kapi_write_origin``,
keyed by the object's uid); storage's change feed joins each change with it
(``kapi.storage.interface.Change.request_id``), and the scanners store the id
on the work item they ask for; the worker that runs the item makes it current
again (log lines carry it, and the writes it makes record it in turn, so a
cascade keeps the id).

The row is written just before the write itself (the registry's
``BEFORE_WRITE_OBSERVERS``), so a scanner that reads the change finds it; a
write that then fails leaves a row that a later write of the object replaces.
Best effort still: a scanner that reads a change after a later request wrote
the same object attributes it to the later one. Rows older than ``KEEP_MINUTES`` are dropped by ``forget_old``.
"""

from __future__ import annotations

import logging
import uuid
from contextlib import nullcontext

from django.db import DatabaseError, connection, transaction

from kapi.observability.context import current_request_id

__all__ = ["FORGET_BATCH", "forget_old", "latest", "record"]

log = logging.getLogger(__name__)

KEEP_MINUTES = 10

_UPSERT = (
    "INSERT INTO kapi_write_origin (uid, request_id, written) VALUES (%s, %s, now())"
    " ON CONFLICT (uid) DO UPDATE SET request_id = EXCLUDED.request_id, written = now()"
)


def record(obj: dict) -> None:
    """Remember that the current request writes ``obj`` (no-op outside a request)."""
    request_id = current_request_id()
    uid = (obj.get("metadata") or {}).get("uid")
    if not request_id or not uid:
        return
    try:
        guard = transaction.atomic() if connection.in_atomic_block else nullcontext()
        with guard, connection.cursor() as cur:
            cur.execute(_UPSERT, [uid, request_id])
    except DatabaseError:  # e.g. before the migration: only log lines lose the id
        log.warning("could not record the request of a write", exc_info=True)


def latest(uid: str) -> str:
    """The request that last wrote the object ``uid`` (as recorded), or ""
    (also for a key that is no uid: controllers keyed by name)."""
    try:
        uuid.UUID(str(uid))
    except ValueError:
        return ""
    try:
        with connection.cursor() as cur:
            cur.execute("SELECT request_id FROM kapi_write_origin WHERE uid = %s", [uid])
            row = cur.fetchone()
    except DatabaseError:
        log.warning("could not read the request of a write", exc_info=True)
        return ""
    return row[0] if row else ""


#: Rows dropped per statement by ``forget_old`` (each one short transaction).
FORGET_BATCH = 1000


def forget_old() -> None:
    """Drop rows older than ``KEEP_MINUTES``, ``FORGET_BATCH`` per statement
    (a purge leaves tens of thousands; one statement for all of them would hold
    a transaction, and with it other work, for seconds). Bounded per call."""
    with connection.cursor() as cur:
        for _ in range(100):
            cur.execute(
                "DELETE FROM kapi_write_origin WHERE uid IN (SELECT uid FROM kapi_write_origin"
                " WHERE written < now() - make_interval(mins => %s) LIMIT %s)",
                [KEEP_MINUTES, FORGET_BATCH],
            )
            if cur.rowcount < FORGET_BATCH:
                break
