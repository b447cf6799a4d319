"""The CRD cleanup finalizer's controller on the runtime (``kapi.controllers``).

Key: a CRD's name. A change of a CRD being deleted that still carries the
``customresourcecleanup.apiextensions.k8s.io`` finalizer requests it (on the
lifecycle's feed, which such a write wakes); reconciling it is one pass of
``kapi.kinds.crdcleanup.cleanup_crd``, again after ``AGAIN_SECONDS`` while
custom resources are still going (their own finalizers pending). The safety
resync requests every CRD being deleted and gives CRDs waiting for names
those another CRD released since.
"""

from __future__ import annotations

from kapi.controllers import feed, workqueue
from kapi.controllers.controller import Controller, Item
from kapi.errors import StatusError
from kapi.kinds.crdcleanup import cleanup_crd, crds_to_clean_up
from kapi.kinds.crdnames import reconcile_waiting
from kapi.kinds.customresourcedefinitions import CLEANUP_FINALIZER
from kapi.lifecycle.watch import FEED
from kapi.registry.store import Registry
from kapi.storage.interface import Change

__all__ = ["AGAIN_SECONDS", "CONTROLLERS", "WATCHES"]

NAME = "crd-cleanup"
#: Seconds between passes of a CRD whose custom resources are still going.
AGAIN_SECONDS = 1.0
_GROUP, _RESOURCE = "apiextensions.k8s.io", "customresourcedefinitions"


def _key(name: str) -> tuple:
    return (NAME, name, _GROUP, _RESOURCE, "", name, "")


class _Plan(feed.Plan):
    def __init__(self) -> None:
        self.names: dict[str, str] = {}  # CRD name -> the request behind it

    def add(self, change: Change) -> None:
        if (change.key.group, change.key.resource) != (_GROUP, _RESOURCE):
            return
        meta = change.metadata
        if (
            change.type != "DELETED"
            and meta.get("deletionTimestamp")
            and CLEANUP_FINALIZER in (meta.get("finalizers") or ())
        ):
            self.names[change.key.name] = change.request_id

    def ask(self) -> int:
        return workqueue.request(
            [(*_key(name), request_id) for name, request_id in self.names.items()]
        )


def _resync(full: bool) -> int:
    asked = workqueue.request([_key(name) for name in crds_to_clean_up()], bump=False)
    reconcile_waiting()
    return asked


class _Cleanup(Controller):
    name = NAME
    quiet_errors = (StatusError,)

    def reconcile(self, item: Item, registry: Registry) -> float | None:
        return None if cleanup_crd(item.key, registry) else AGAIN_SECONDS


CONTROLLERS = [_Cleanup()]
WATCHES = [feed.Watch(FEED, _Plan, _resync, reads=("deletionTimestamp", "finalizers"))]
