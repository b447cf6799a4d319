"""Celery tasks of the sync (thin: names in, one call, nothing out).

Retries only on transient database errors. Syncs and GitRepositories are
reconciled by the controller runtime (``sync.controllers``, whose changes come
from the runtime's ``sync`` feed, ``sync.changes``), which retries failures
with backoff (the intent is in the database, not in a message).
"""

from __future__ import annotations

from celery import shared_task
from django.db import InterfaceError, OperationalError

__all__ = ["expire_retained", "housekeeping", "notify"]

_TRANSIENT = (OperationalError, InterfaceError)


@shared_task(name="kapi.sync.notify", acks_late=True, ignore_result=True, autoretry_for=_TRANSIENT,
             retry_backoff=True, max_retries=3)
def notify(namespace: str, kind: str, name: str, uid: str, type_: str, reason: str, message: str,
           revision: str) -> None:
    from sync.notify import deliver

    deliver(namespace, kind, name, uid, type_, reason, message, revision)


@shared_task(name="kapi.sync.expire_retained", acks_late=True, ignore_result=True)
def expire_retained() -> None:
    """Beat: remove retained hosted repositories past ``KAPI_GIT_RETENTION_DAYS``,
    a bounded batch per run; the next batch is enqueued at once if more are due."""
    from sync.retention import expire

    _, more = expire()
    if more:
        expire_retained.delay()


@shared_task(name="kapi.sync.housekeeping", acks_late=True, ignore_result=True)
def housekeeping(grace_seconds: float | None = None) -> None:
    """Beat: remove files of deleted GitRepositories and interrupted work, git gc."""
    from sync import housekeeping as work

    if grace_seconds is None:
        work.run()
    else:
        work.run(grace_seconds=grace_seconds)
