"""Waking the sync's change scan after a write that may matter to it.

Registered as a registry write observer (``sync.apps``), as the lifecycle's
feed is woken (``kapi.lifecycle.wakeup``): a Sync or GitRepository written
in a way that asks for a run (``sync.changes.run_reason``), or an object a
Sync applied deleted or changed by another manager (drift), flips the
``wanted`` flag of the scan's cursor (row 2 of ``sync_change_cursor``) and,
only when it flipped it, enqueues the scan after the commit. A burst of
writes thus sends one scan, and the scan clears the flag before it reads, so
a write landing after its read gets a fresh one. Any other write costs
nothing; the sync's own applies are not drift and wake nothing.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError, connection, transaction

from sync import changes, queue
from sync.api import GROUP

__all__ = ["wake_scan", "wake_scan_on_write"]

log = logging.getLogger(__name__)

_KINDS = {"syncs": queue.SYNC, "gitrepositories": queue.REPOSITORY}


def _matters(rt, obj: dict, deleted: bool) -> bool:
    meta = obj.get("metadata") or {}
    if rt.stored_group == GROUP:
        kind = _KINDS.get(rt.stored_resource)
        if kind is None:
            return False
        status = obj.get("status") or {}
        return changes.run_reason(
            kind, "DELETED" if deleted else "MODIFIED", meta,
            status.get("observedGeneration"), status.get("lastHandledReconcileAt"),
            status.get("pruneHeldRevision"), (status.get("pin") or {}).get("revision"),
        ) is not None
    return changes.owning_sync(meta) is not None and changes.drifted(meta, deleted)


def wake_scan_on_write(rt, obj: dict, deleted: bool) -> None:
    """A ``WRITE_OBSERVERS`` entry; never raises (a missed wake leaves the safety sweep)."""
    try:
        if _matters(rt, obj, deleted):
            wake_scan()
    except Exception:  # noqa: BLE001 - an observer must not fail the write
        log.warning("could not wake the sync's change scan", exc_info=True)


def wake_scan() -> None:
    if connection.in_atomic_block:
        # Flipped inside the writer's transaction, the flag's row lock would
        # be held to its end, and every other writer that matters would wait.
        if not any(entry[1] is _flip for entry in connection.run_on_commit):
            transaction.on_commit(_flip)
        return
    _flip()


def _flip() -> None:
    try:
        with connection.cursor() as cur:
            cur.execute("UPDATE sync_change_cursor SET wanted = true WHERE id = 2 AND NOT wanted")
            flipped = cur.rowcount == 1
    except DatabaseError:  # e.g. before the migration: the safety sweep catches up
        log.warning("could not flag the sync's change scan", exc_info=True)
        return
    if flipped:
        _send_scan()


def _send_scan() -> None:
    from sync.tasks import scan_changes

    def send() -> None:
        try:
            scan_changes.delay()
        except Exception:  # the broker is down: the safety sweep scans
            log.warning("could not enqueue the sync's change scan", exc_info=True)

    transaction.on_commit(send)
