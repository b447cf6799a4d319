"""The quota's watch, on the lifecycle's feed: a change of a ResourceQuota, or
of any object in a namespace that holds one, asks for ``resource-quota`` of that
namespace (all of its quotas are recomputed together, as kube's controller
replenishes them). Writes in such namespaces wake the feed (quota admission
reads the namespace's quotas anyway, ``admission``); deletions always do.
The resync asks for every namespace that holds a quota.
"""

from __future__ import annotations

from kapi.controllers import feed, workqueue
from kapi.lifecycle.watch import FEED
from kapi.storage import default_storage
from kapi.storage.interface import Change, ListQuery

__all__ = ["NAME", "WATCH", "quota_key"]

NAME = "resource-quota"
QUOTAS = ("", "resourcequotas")


def quota_key(namespace: str) -> tuple:
    return (NAME, namespace, "", "namespaces", "", namespace, "")


def _with_quotas(namespaces: list[str]) -> list[str]:
    storage = default_storage()
    return [ns for ns in namespaces if storage.count_in_namespace(ns, [QUOTAS])]


class _Plan(feed.Plan):
    def __init__(self) -> None:
        self.quota_changed: dict[str, str] = {}
        self.touched: dict[str, str] = {}

    def add(self, change: Change) -> None:
        namespace = change.key.namespace
        if not namespace:
            return
        if (change.key.group, change.key.resource) == QUOTAS:
            self.quota_changed[namespace] = change.request_id
        else:
            self.touched.setdefault(namespace, change.request_id)

    def ask(self) -> int:
        others = [ns for ns in self.touched if ns not in self.quota_changed]
        rows = [(*quota_key(ns), r) for ns, r in self.quota_changed.items()]
        rows += [(*quota_key(ns), self.touched[ns]) for ns in _with_quotas(others)]
        return workqueue.request(rows)


def _resync(full: bool) -> int:
    quotas = default_storage().list(ListQuery(group=QUOTAS[0], resource=QUOTAS[1])).items
    namespaces = sorted({o["metadata"]["namespace"] for o in quotas})
    return workqueue.request([quota_key(ns) for ns in namespaces], bump=False)


WATCH = feed.Watch(FEED, _Plan, _resync, reads=())
