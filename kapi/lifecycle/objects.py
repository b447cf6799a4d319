"""Finding objects the way the workers need to: by uid, by owner, by stored type.

The registry addresses objects by key; the garbage collector knows them by uid
(``ownerReferences`` name their owner by uid) and must find every dependent of
an owner across all kinds. Storage answers both (``Storage.get_by_uid``,
``Storage.dependents``: one indexed statement each).
"""

from __future__ import annotations

import uuid
from typing import Any

from kapi.controllers import workqueue
from kapi.errors import StatusError
from kapi.registry.catalog import catalog
from kapi.registry.options import DeleteOptions
from kapi.registry.resource import ResourceType
from kapi.registry.store import Registry
from kapi.storage import Preconditions, default_storage
from kapi.storage.interface import ObjectSummary

__all__ = [
    "TypeNotServed",
    "delete_same",
    "dependents",
    "get_by_uid",
    "kind_type",
    "refs_to",
    "request_dependents",
    "served_namespaced",
    "type_for_stored",
    "valid_uids",
]

Object = dict[str, Any]


def valid_uids(uids) -> list[str]:
    """The ones that parse as UUIDs (anything else can name no stored object)."""
    out = []
    for uid in uids:
        try:
            out.append(str(uuid.UUID(str(uid))))
        except ValueError:
            continue
    return out


class TypeNotServed(Exception):
    """An object or owner reference of a kind this process does not serve (yet):
    like kube's garbage collector on a REST mapping error, the item is retried
    later rather than dropped (a CRD may have just been created)."""


def type_for_stored(group: str, resource: str) -> ResourceType | None:
    """The served type whose rows are stored as (group, resource), preferring the
    type served in that same group (core/v1 Event over events.k8s.io/v1). A miss
    looks at storage again: a CRD created a moment ago is not missed."""
    return _stored_type(group, resource, catalog()) or _stored_type(
        group, resource, catalog(fresh=True)
    )


def _stored_type(group: str, resource: str, cat) -> ResourceType | None:
    found = None
    for rt in cat.types():
        if rt.stored_group == group and rt.stored_resource == resource:
            if rt.group == group:
                return rt
            found = found or rt
    return found


def kind_type(api_version: str | None, kind: str | None) -> ResourceType | None:
    """The served type an ownerReference's apiVersion and kind name (any served
    version of the group will do: all versions share storage)."""
    if not api_version or not kind:
        return None
    group, _, version = api_version.rpartition("/")
    return _kind_type(group, version, kind, catalog()) or _kind_type(
        group, version, kind, catalog(fresh=True)
    )


def _kind_type(group: str, version: str, kind: str, cat) -> ResourceType | None:
    rt = cat.for_kind(group, version, kind)
    if rt is not None:
        return rt
    for rt in cat.types():
        if rt.group == group and rt.kind == kind:
            return rt
    return None


def served_namespaced(fresh: bool = False) -> list[tuple[str, str]]:
    """(stored group, stored resource) of every namespaced type served now."""
    return sorted(
        {
            (rt.stored_group, rt.stored_resource)
            for rt in catalog(fresh=fresh).types()
            if rt.namespaced
        }
    )


def get_by_uid(
    uid: str, registry: Registry | None = None
) -> tuple[ResourceType, Object] | None:
    """The object with this uid as its served type shows it (one indexed read);
    None when there is no such object. ``TypeNotServed`` when its kind is not
    served."""
    found = default_storage().get_by_uid(uid)
    if found is None:
        return None
    key, data = found
    rt = type_for_stored(key.group, key.resource)
    if rt is None:
        raise TypeNotServed(f"{key.resource}.{key.group} is not served")
    return rt, rt.strategy.from_storage(data, rt.version)


def dependents(owner_uids: list[str], limit: int | None = None) -> list[ObjectSummary]:
    """Every object naming one of ``owner_uids`` in its ownerReferences."""
    return default_storage().dependents(list(owner_uids), limit)


def refs_to(dependent: ObjectSummary, owner_uid: str) -> list[dict]:
    """The ownerReferences of ``dependent`` that name ``owner_uid``."""
    return [r for r in dependent.owner_references if r.get("uid") == owner_uid]


def request_dependents(owner_uids: list[str], request_id: str | None = None) -> int:
    """Request a check (``attempt``) of every dependent of ``owner_uids``;
    ``request_id`` (default: the current one) is the request behind it."""
    rows = [
        ("attempt", d.uid, d.key.group, d.key.resource, d.key.namespace, d.key.name, "")
        for d in dependents(owner_uids)
    ]
    if request_id is not None:
        rows = [(*row, request_id) for row in rows]
    return workqueue.request(rows)


def delete_same(registry: Registry, rt: ResourceType, obj: Object, policy: str | None) -> None:
    """Delete ``obj`` with ``policy`` if it is still the object of its uid: a
    404 (gone) or 409 (the uid precondition: another object now) is not an
    error; any other ``StatusError`` is raised."""
    meta = obj["metadata"]
    options = DeleteOptions(preconditions=Preconditions(uid=meta["uid"]), propagation_policy=policy)
    try:
        registry.delete(rt, meta.get("namespace", ""), meta["name"], options)
    except StatusError as exc:
        if exc.code not in (404, 409):
            raise
