"""Waking a Sync's health check when an object it waits on is written.

A Sync with ``spec.wait`` that has applied its objects records
``status.healthCheckDeadline`` and waits for them. Instead of relying on its
poll (``SYNC_HEALTH_POLL_SECONDS``, now only a safety net), every stored write
of an object labelled with an owning Sync asks, after the write, whether that
Sync is waiting (a read of the Sync's stored status, so it holds for every API
process and worker) and, if so, requests a re-check through the sync's work
queue (``sync.controllers``: the intent in PostgreSQL, run by whichever worker).
"""

from __future__ import annotations

import logging
from contextlib import nullcontext

from django.db import connection, transaction

from kapi.storage import Key, default_storage
from sync import controllers
from sync.kinds import GROUP, LABEL_NAME, LABEL_NAMESPACE

__all__ = ["wake_waiting_sync"]

log = logging.getLogger(__name__)

#: Set on a Sync's status while it waits for its objects' health.
_WAITING = ("status", "healthCheckDeadline")


def wake_waiting_sync(rt, obj: dict, deleted: bool) -> None:
    """A ``WRITE_OBSERVERS`` entry; never raises (a failure leaves the poll)."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    namespace, name = labels.get(LABEL_NAMESPACE), labels.get(LABEL_NAME)
    if not namespace or not name or rt.stored_group == GROUP:
        return
    try:
        # Inside the writer's transaction a savepoint, so that a failure here
        # cannot break it; otherwise one autocommitted statement.
        guard = transaction.atomic() if connection.in_atomic_block else nullcontext()
        with guard:
            key = Key(GROUP, "syncs", namespace, name)
            waiting = default_storage().has_field(key, _WAITING)
            if waiting:
                controllers.request(controllers.SYNC, namespace, name, "health")
    except Exception:  # noqa: BLE001 - an observer must not fail the write
        log.warning("cannot wake the health check of Sync %s/%s", namespace, name, exc_info=True)
