"""Flux's per-object series only for objects that exist.

``gotk_reconcile_condition``, ``gotk_suspend_status`` and
``gotk_reconcile_duration_seconds`` carry an object's kind, namespace and
name. Flux deletes them when the object goes (``fluxcd/pkg/runtime/metrics``
``DeleteCondition``, ``DeleteSuspend``, ``DeleteDuration``); the multiprocess
files of ``prometheus_client`` cannot delete a series, so a scrape drops the
samples of objects that no longer exist instead. Without this every Sync or
GitRepository ever created would stay on ``/metrics`` forever, and each scrape
would grow with them.
"""

from __future__ import annotations

import logging

from prometheus_client.registry import Collector

__all__ = ["ExistingObjectsOnly"]

log = logging.getLogger(__name__)

#: kind label -> (API group, resource) of the objects gotk_* series describe.
KINDS = {
    "Sync": ("sync.kapi.dev", "syncs"),
    "GitRepository": ("sync.kapi.dev", "gitrepositories"),
}


def _existing() -> set[tuple[str, str, str]]:
    from kapi.storage import default_storage

    by_resource = {resource: kind for kind, (_, resource) in KINDS.items()}
    storage = default_storage()
    found = set()
    for group in {group for group, _ in KINDS.values()}:
        found |= {(by_resource[k.resource], k.namespace, k.name) for k in storage.keys(group, list(by_resource))}
    return found


class ExistingObjectsOnly(Collector):
    """Wraps a collector; drops ``gotk_*`` samples of objects that are gone.

    If the database cannot be read, the samples are kept (a scrape while
    PostgreSQL restarts must not make every series vanish)."""

    def __init__(self, inner: Collector) -> None:
        self.inner = inner

    def collect(self):
        existing = None
        for family in self.inner.collect():
            if family.name.startswith("gotk_"):
                if existing is None:
                    try:
                        existing = _existing()
                    except Exception as exc:  # noqa: BLE001 - keep every sample
                        log.warning("metrics: cannot list Flux objects: %s", exc)
                        existing = False
                if existing is not False:
                    family.samples = [
                        s for s in family.samples
                        if s.labels.get("kind") not in KINDS
                        or (s.labels["kind"], s.labels.get("namespace", ""), s.labels.get("name", ""))
                        in existing
                    ]
            yield family
