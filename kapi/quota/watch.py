"""The quota controller's watch: which changes map to which quotas.

On the lifecycle's feed (``kapi.lifecycle.watch.FEED``), which every deletion
already wakes; creates and updates that change usage wake it through quota
admission (``kapi.quota.admission``) and ``kapi.quota.wakeup``. Any change in a
namespace asks for every quota of that namespace (one indexed statement per
batch); the resync asks for every quota.
"""

from __future__ import annotations

from kapi.controllers import feed, workqueue
from kapi.lifecycle.watch import FEED
from kapi.storage import default_storage
from kapi.storage.interface import Change

__all__ = ["FEED", "NAME", "QUOTAS", "WATCH"]

#: The controller's name (the work table's ``controller``).
NAME = "resourcequota"
QUOTAS = ("", "resourcequotas")


def _row(summary) -> tuple:
    k = summary.key
    return (NAME, summary.uid, k.group, k.resource, k.namespace, k.name, "")


class _Plan(feed.Plan):
    def __init__(self) -> None:
        self.namespaces: dict[str, str] = {}  # namespace -> a request that changed it

    def add(self, change: Change) -> None:
        namespace = change.key.namespace
        if namespace and (namespace not in self.namespaces or change.request_id):
            self.namespaces[namespace] = change.request_id or ""

    def ask(self) -> int:
        found = default_storage().summaries_in_namespaces(QUOTAS, sorted(self.namespaces))
        return workqueue.request([(*_row(s), self.namespaces.get(s.key.namespace, "")) for s in found])


def _resync(full: bool) -> int:
    found = default_storage().summaries_in_namespaces(QUOTAS, _all_namespaces())
    return workqueue.request([_row(s) for s in found], bump=False)


def _all_namespaces() -> list[str]:
    return [o.key.name for o in default_storage().summaries_with(("", "namespaces"), "metadata")]


WATCH = feed.Watch(FEED, _Plan, _resync)
