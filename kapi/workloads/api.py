"""The workload controllers' client: their types and the registry verbs they use.

Every write goes through the registry (``kapi.registry.store``), as field
manager ``kube-controller-manager``; objects are read from storage as they
are now (no informer cache, so no expectations are needed: a reconcile sees
the Pods its previous run created).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from kapi.clock import now_rfc3339
from kapi.errors import StatusError
from kapi.lifecycle import objects
from kapi.registry.catalog import catalog
from kapi.registry.options import CreateOptions, ListOptions, UpdateOptions
from kapi.registry.resource import ResourceType
from kapi.registry.store import Registry
from kapi.selectors.errors import SelectorError
from kapi.selectors.labels import LabelSelector, label_selector_from_dict
from kapi.storage import Preconditions, default_storage
from kapi.workloads import FIELD_MANAGER

__all__ = [
    "Object",
    "create",
    "delete",
    "get",
    "gone",
    "list_objects",
    "now",
    "owned",
    "parse_time",
    "resource",
    "selector_of",
    "update",
    "update_status",
]

Object = dict[str, Any]

#: (group, plural) -> the served version the controllers read and write.
_VERSIONS = {
    "": "v1",
    "apps": "v1",
    "batch": "v1",
    "discovery.k8s.io": "v1",
}


def resource(group: str, plural: str) -> ResourceType:
    rt = catalog().lookup(group, _VERSIONS[group], plural)
    if rt is None:
        raise LookupError(f"{plural}.{group} is not served")
    return rt


#: Now, as a ``metav1.Time``.
now = now_rfc3339


def parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def gone(exc: StatusError) -> bool:
    """404 (gone) and 409 (a uid precondition: another object now)."""
    return exc.code in (404, 409)


def selector_of(selector: Any) -> LabelSelector | None:
    """A ``metav1.LabelSelector`` parsed; None if it is invalid (kube's
    controllers then do nothing)."""
    try:
        return label_selector_from_dict(selector if isinstance(selector, dict) else None)
    except SelectorError:
        return None


def list_objects(
    registry: Registry, rt: ResourceType, namespace: str, selector: LabelSelector | None = None
) -> list[Object]:
    options = ListOptions(label_selector=selector) if selector is not None else None
    return registry.list(rt, namespace, options)["items"]


def owned(registry: Registry, rt: ResourceType, owner_uid: str) -> list[Object]:
    """The objects of ``rt`` naming ``owner_uid`` in their ownerReferences."""
    out = []
    for summary in default_storage().dependents([owner_uid]):
        key = summary.key
        if (key.group, key.resource) != (rt.stored_group, rt.stored_resource):
            continue
        try:
            out.append(registry.get(rt, key.namespace, key.name))
        except StatusError as exc:
            if exc.code != 404:
                raise
    return out


def create(registry: Registry, rt: ResourceType, namespace: str, obj: Object) -> Object:
    return registry.create(rt, namespace, obj, CreateOptions(field_manager=FIELD_MANAGER))


def get(registry: Registry, rt: ResourceType, namespace: str, name: str) -> Object | None:
    """The object, or None if there is none."""
    try:
        return registry.get(rt, namespace, name)
    except StatusError as exc:
        if exc.code == 404:
            return None
        raise


def update(
    registry: Registry, rt: ResourceType, obj: Object, mutate, subresource: str = "", exact: bool = True
) -> Object | None:
    """``mutate(current)`` on the object if it is still as read (kube's
    Update with the resourceVersion read); None if it is gone or changed
    meanwhile (that change asks for another reconcile). ``exact`` False: on
    the object as it is now if it has the same uid (kube's patches)."""
    meta = obj["metadata"]
    version = int(meta["resourceVersion"]) if exact else None
    try:
        return registry.update_with(
            rt,
            meta.get("namespace", ""),
            meta["name"],
            mutate,
            UpdateOptions(field_manager=FIELD_MANAGER, subresource=subresource),
            preconditions=Preconditions(uid=meta["uid"], resource_version=version),
        )
    except StatusError as exc:
        if gone(exc):
            return None
        raise


def update_status(
    registry: Registry, rt: ResourceType, obj: Object, status: Object, annotations: dict | None = None
) -> Object | None:
    """Write ``status`` as the object's whole status (kube's UpdateStatus),
    with ``annotations`` where the kind's status takes them (a Deployment's)."""

    def put(current: Object) -> Object:
        current["status"] = status
        if annotations is not None:
            current["metadata"]["annotations"] = annotations
        return current

    return update(registry, rt, obj, put, "status")


def delete(registry: Registry, rt: ResourceType, obj: Object, policy: str | None = None) -> None:
    """Delete ``obj`` if it is still the object of its uid."""
    objects.delete_same(registry, rt, obj, policy)
