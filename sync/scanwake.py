"""Waking the sync's change scan after a write that may matter to it.

Registered as a registry write observer (``sync.apps``), as the lifecycle's
feed is woken (``kapi.lifecycle.wakeup``): a Sync or GitRepository written
in a way that asks for a run (``sync.changes.run_reason``), or an object a
Sync applied deleted or changed by another manager (drift), wakes the
runtime's ``sync`` feed (``kapi.controllers.feed.wake``): a burst of writes
sends one read. Any other write costs
nothing; the sync's own applies are not drift and wake nothing.
"""

from __future__ import annotations

import logging

from kapi.controllers import feed
from sync import changes, controllers
from sync.kinds import GROUP

__all__ = ["wake_scan", "wake_scan_on_write"]

log = logging.getLogger(__name__)

_KINDS = {"syncs": controllers.SYNC, "gitrepositories": controllers.REPOSITORY}


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
    feed.wake(changes.FEED)
