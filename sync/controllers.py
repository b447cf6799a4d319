"""The sync's controllers on the runtime (``kapi.controllers``): Syncs and
GitRepositories.

Key: ``NAMESPACE/NAME``, of controller ``sync`` or ``gitrepository``.
``request`` asks for a run (the change scan, a push, a webhook, a new
revision, a health check to look at again); the reason and a reported drift
travel as the item's hints, so the next run applies in full after a drift
even if other requests came since, and a run that fails keeps them for the
next. Reconciling a key is one pass of ``sync.reconcile.reconcile_sync`` or
``sync.source.reconcile_repository``, observed for the metrics and the
``kapi.reconcile`` log line (``sync.observe``); what it returns, seconds to
the next periodic run, is its ``requeue_after``. Both are long-running: the
runtime claims their keys one at a time and extends their lease while they
run, so a pass never overlaps another of the same key, however long it takes,
and a killed worker's key runs again once its lease is out.
"""

from __future__ import annotations

from kapi import errors
from kapi.controllers import wakeup, workqueue
from kapi.controllers.controller import Controller, Item
from kapi.registry.store import Registry
from sync.kinds import GROUP

__all__ = ["CONTROLLERS", "REPOSITORY", "SYNC", "forget", "request", "request_all"]

REPOSITORY = "GitRepository"
SYNC = "Sync"
#: The hint that a drift was reported since the last run.
DRIFT = "drift"
_CONTROLLERS = {SYNC: "sync", REPOSITORY: "gitrepository"}
_RESOURCES = {SYNC: "syncs", REPOSITORY: "gitrepositories"}


def request(kind: str, namespace: str, name: str, reason: str, drift: bool = False,
            request_id: str | None = None) -> None:
    """Ask for a run of the Sync or GitRepository (``kind``), and wake a
    worker after the commit.

    ``request_id``: the API request behind it (default: the current one); the
    run makes it current, so its log lines carry it."""
    if request_all([(kind, namespace, name, reason, drift, request_id)]):
        wakeup.wake_workers()


def request_all(runs: list[tuple]) -> int:
    """``request`` for each ``(kind, namespace, name, reason, drift,
    request_id)``, without waking anyone (the caller does); returns how many."""
    by_hints: dict[tuple[str, ...], list[tuple]] = {}
    for kind, namespace, name, reason, drift, request_id in runs:
        row: tuple = (_CONTROLLERS[kind], f"{namespace}/{name}", GROUP, _RESOURCES[kind],
                      namespace, name, "")
        if request_id is not None:
            row = (*row, request_id[:128])
        hints = (reason[:32], DRIFT) if drift else (reason[:32],)
        by_hints.setdefault(hints, []).append(row)
    return sum(workqueue.request(rows, hints=list(h)) for h, rows in by_hints.items())


def forget(kind: str, namespace: str, name: str) -> None:
    """The object is gone: drop its key."""
    workqueue.forget(_CONTROLLERS[kind], f"{namespace}/{name}")


def _read(kind: str, namespace: str, name: str) -> dict | None:
    """The object after a pass (None once it is gone), for the metrics."""
    from sync.kinds import repository_type, sync_type

    rt = sync_type() if kind == SYNC else repository_type()
    try:
        return Registry().get(rt, namespace, name)
    except errors.StatusError as exc:
        if exc.code == 404:
            return None
        raise


class _SyncKindController(Controller):
    """What a Sync's and a GitRepository's controllers share: a pass may take
    long (git, apply, health checks), and a failure backs off from 2 s to 5 min."""

    long_running = True
    backoff_base = 1.0
    backoff_max = 300.0


class _SyncController(_SyncKindController):
    name = _CONTROLLERS[SYNC]

    def reconcile(self, item: Item, registry: Registry) -> float | None:
        from sync.observe import observed
        from sync.reconcile import reconcile_sync

        drift = DRIFT in item.hints
        reason = ",".join(sorted(h for h in item.hints if h != DRIFT)) or (DRIFT if drift else "")
        ns, n = item.namespace, item.name
        return observed(SYNC, ns, n, lambda: _read(SYNC, ns, n),
                        lambda: reconcile_sync(ns, n, reason, drift))


class _RepositoryController(_SyncKindController):
    name = _CONTROLLERS[REPOSITORY]

    def reconcile(self, item: Item, registry: Registry) -> float | None:
        from sync.observe import observed
        from sync.source import reconcile_repository

        ns, n = item.namespace, item.name
        return observed(REPOSITORY, ns, n, lambda: _read(REPOSITORY, ns, n),
                        lambda: reconcile_repository(ns, n))


CONTROLLERS = [_SyncController(), _RepositoryController()]
