"""Celery tasks of the sync (thin: names in, one call, nothing out).

Retries only on transient database errors; every other failure is recorded on
the object and retried with backoff by ``sync.queue`` (the intent is in the
database, not in the message).
"""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_ready
from django.db import InterfaceError, OperationalError

__all__ = [
    "expire_retained", "housekeeping", "notify", "reconcile_repository", "reconcile_sync",
    "scan_changes", "sweep",
]

_TRANSIENT = (OperationalError, InterfaceError)


@shared_task(name="kapi.sync.reconcile_sync", acks_late=True, autoretry_for=_TRANSIENT,
             retry_backoff=True, max_retries=5)
def reconcile_sync(namespace: str, name: str) -> None:
    from sync import queue
    from sync.observe import observed
    from sync.reconcile import reconcile_sync as work

    queue.run(queue.SYNC, namespace, name,
              lambda ns, n, reason, drift: observed(
                  "Sync", ns, n, lambda: _read("sync", ns, n),
                  lambda: work(ns, n, reason, drift)))


@shared_task(name="kapi.sync.reconcile_repository", acks_late=True, autoretry_for=_TRANSIENT,
             retry_backoff=True, max_retries=5)
def reconcile_repository(namespace: str, name: str) -> None:
    from sync import queue
    from sync.observe import observed
    from sync.source import reconcile_repository as work

    queue.run(queue.REPOSITORY, namespace, name,
              lambda ns, n, reason, drift: observed(
                  "GitRepository", ns, n, lambda: _read("repository", ns, n),
                  lambda: work(ns, n)))


@shared_task(name="kapi.sync.notify", acks_late=True, ignore_result=True, autoretry_for=_TRANSIENT,
             retry_backoff=True, max_retries=3)
def notify(namespace: str, kind: str, name: str, uid: str, type_: str, reason: str, message: str,
           revision: str) -> None:
    from sync.notify import deliver

    deliver(namespace, kind, name, uid, type_, reason, message, revision)


@shared_task(name="kapi.sync.scan_changes", acks_late=True, ignore_result=True,
             autoretry_for=_TRANSIENT, retry_backoff=True, max_retries=5)
def scan_changes() -> None:
    """Woken by a write that may matter (``sync.scanwake``): read the change log."""
    from kapi.observability.tasks import nothing_done
    from sync import changes

    read, again = changes.scan()
    if again:
        scan_changes.delay()
    if not read:
        nothing_done()


@shared_task(name="kapi.sync.sweep", acks_late=True, ignore_result=True)
def sweep() -> None:
    """The sync's timer (``kapi.duetimer``), and its slow safety beat: read the
    change log, enqueue the items due, arm the timer for the next. Logs
    nothing when it found nothing."""
    from kapi.observability.tasks import nothing_done
    from sync import changes, queue

    read, again = changes.scan()
    if again:
        scan_changes.delay()
    enqueued = queue.sweep()
    next_in = queue.next_due_in()
    if next_in is not None:
        queue.arm_timer(next_in)
    if not read and not enqueued:
        nothing_done()


@worker_ready.connect
def _catch_up_on_start(**_) -> None:
    """A worker that starts sweeps once: timer messages may have gone with the
    previous worker or broker."""
    sweep.delay()


@shared_task(name="kapi.sync.expire_retained", acks_late=True, ignore_result=True)
def expire_retained() -> None:
    """Beat: remove retained hosted repositories past ``KAPI_GIT_RETENTION_DAYS``,
    a bounded batch per run; the next batch is enqueued at once if more are due."""
    from sync.retention import expire

    _, more = expire()
    if more:
        expire_retained.delay()


def _read(which: str, namespace: str, name: str) -> dict | None:
    """The object after a pass (None once it is gone), for the metrics."""
    from kapi import errors
    from kapi.registry.store import Registry
    from sync.api import repository_type, sync_type

    rt = sync_type() if which == "sync" else repository_type()
    try:
        return Registry().get(rt, namespace, name)
    except errors.StatusError as exc:
        if exc.code == 404:
            return None
        raise


@shared_task(name="kapi.sync.housekeeping", acks_late=True, ignore_result=True)
def housekeeping(grace_seconds: float | None = None) -> None:
    """Beat: remove files of deleted GitRepositories and interrupted work, git gc."""
    from sync import housekeeping as work

    if grace_seconds is None:
        work.run()
    else:
        work.run(grace_seconds=grace_seconds)
