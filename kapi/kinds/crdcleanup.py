"""The ``customresourcecleanup.apiextensions.k8s.io`` finalizer: deleting a CRD
deletes its custom resources first, then the CRD itself.

Run by the workers (``kapi.lifecycle.crds``, a controller on the runtime),
idempotent by construction: each pass deletes the custom resources that are still there (through the registry, so
their own finalizers and the event log apply), and only when none is left
removes the finalizer, which lets the registry remove the CRD and the catalog
stop serving the kind.
"""

from __future__ import annotations

from kapi import errors
from kapi.kinds.crdnames import reconcile_waiting
from kapi.kinds.custom import types_for_crd
from kapi.kinds.customresourcedefinitions import CLEANUP_FINALIZER
from kapi.registry.catalog import catalog
from kapi.registry.options import DeleteOptions
from kapi.registry.store import Registry
from kapi.storage import ListQuery

__all__ = ["cleanup_crd", "crds_to_clean_up"]

_GROUP = "apiextensions.k8s.io"
_RESOURCE = "customresourcedefinitions"


def crds_to_clean_up(registry: Registry | None = None) -> list[str]:
    """Names of CRDs being deleted that still carry the cleanup finalizer."""
    registry = registry or Registry()
    page = registry.storage.list(ListQuery(group=_GROUP, resource=_RESOURCE))
    return [
        crd["metadata"]["name"]
        for crd in page.items
        if crd["metadata"].get("deletionTimestamp")
        and CLEANUP_FINALIZER in (crd["metadata"].get("finalizers") or ())
    ]


def cleanup_crd(name: str, registry: Registry | None = None) -> bool:
    """One pass for CRD ``name``; True when the CRD is gone or needs nothing more."""
    registry = registry or Registry()
    crd_type = catalog().lookup(_GROUP, "v1", _RESOURCE)
    try:
        crd = registry.get(crd_type, "", name)
    except errors.StatusError as exc:
        if exc.code == 404:
            return True
        raise
    meta = crd["metadata"]
    if not meta.get("deletionTimestamp") or CLEANUP_FINALIZER not in (
        meta.get("finalizers") or ()
    ):
        return True
    served = types_for_crd({**crd, "metadata": {**meta, "deletionTimestamp": None}})
    remaining = 0
    if served:
        rt = served[0]
        for item in registry.list(rt, None)["items"]:
            item_meta = item["metadata"]
            try:
                registry.delete(
                    rt,
                    item_meta.get("namespace", ""),
                    item_meta["name"],
                    DeleteOptions(),
                )
            except errors.StatusError as exc:
                if exc.code != 404:
                    raise
        remaining = len(registry.list(rt, None)["items"])
    if remaining:
        return False

    def drop_finalizer(obj: dict) -> dict:
        obj["metadata"]["finalizers"] = [
            f for f in obj["metadata"].get("finalizers") or () if f != CLEANUP_FINALIZER
        ]
        return obj

    try:
        registry.update_with(crd_type, "", name, drop_finalizer)
    except errors.StatusError as exc:
        if exc.code != 404:
            raise
    # The CRD is gone and its names are free: CRDs that wanted them may take them.
    reconcile_waiting(registry)
    return True
