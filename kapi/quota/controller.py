"""Recomputing quotas, after kube's ``pkg/controller/resourcequota``: every
ResourceQuota of a namespace gets ``status.hard`` = ``spec.hard`` and
``status.used`` for each resource it names, counted from the objects as they
are now (``usage``). A status some client wrote by hand is put back. Written
with the quota's resourceVersion: a quota changed meanwhile is reconciled again
(its change asks for it).
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction

from kapi.errors import StatusError
from kapi.lifecycle import FIELD_MANAGER
from kapi.quota import usage as quota_usage
from kapi.registry.catalog import catalog
from kapi.registry.options import UpdateOptions
from kapi.registry.store import Registry

__all__ = ["quotas_of", "recompute"]

#: Kinds whose objects are evaluated one by one (the others are counted).
_EVALUATED = {
    "pods": ("", "pods"),
    "services": ("", "services"),
    "persistentvolumeclaims": ("", "persistentvolumeclaims"),
}


def quotas_of(registry: Registry, namespace: str) -> list[dict]:
    rt = catalog().lookup("", "v1", "resourcequotas")
    return list(registry.list(rt, namespace).get("items") or [])


def _collection_of(name: str) -> tuple[str, str] | None:
    """The stored (group, resource) an object-count name counts."""
    if name in quota_usage.LEGACY_COUNTS:
        return ("", quota_usage.LEGACY_COUNTS[name])
    if not name.startswith("count/"):
        return None
    resource, _, group = name[len("count/"):].partition(".")
    return (group, resource)


def _needs_objects(name: str) -> tuple[str, str] | None:
    """The kind whose objects must be read one by one to know ``name``."""
    if name.startswith("services."):
        return _EVALUATED["services"]
    if name.startswith(("requests.storage",)) or ".storageclass.storage.k8s.io/" in name:
        return _EVALUATED["persistentvolumeclaims"]
    collection = _collection_of(name)
    if collection == ("", "pods") or collection is None:
        return _EVALUATED["pods"]
    return None


class _Namespace:
    """What the objects of one namespace add up to, read once per pass."""

    def __init__(self, registry: Registry, namespace: str) -> None:
        self.registry, self.namespace = registry, namespace
        self._objects: dict[tuple[str, str], list[dict]] = {}
        self._counts: dict[tuple[str, str], int] = {}

    def objects(self, collection: tuple[str, str]) -> list[dict]:
        if collection not in self._objects:
            group, resource = collection
            rt = catalog().lookup(group, "v1", resource)
            self._objects[collection] = list(self.registry.list(rt, self.namespace).get("items") or [])
        return self._objects[collection]

    def count(self, collections: list[tuple[str, str]]) -> None:
        missing = [c for c in collections if c not in self._counts]
        if missing:
            found = self.registry.storage.count_in_namespace(self.namespace, missing)
            for c in missing:
                self._counts[c] = found.get(c, 0)

    def used(self, quota: dict, names: list[str]) -> dict[str, Fraction]:
        used: dict[str, Fraction] = defaultdict(Fraction)
        scoped = bool((quota.get("spec") or {}).get("scopes") or (quota.get("spec") or {}).get("scopeSelector"))
        evaluated = {_needs_objects(n) for n in names} - {None}
        if scoped:
            evaluated = {_EVALUATED["pods"]}
        for collection in evaluated:
            group, resource = collection
            for obj in self.objects(collection):
                if not quota_usage.matches_scopes(quota, group, resource, obj):
                    continue
                for name, value in quota_usage.usage(group, resource, obj).items():
                    used[name] += value
        counted = [] if scoped else [
            c for n in names if (c := _collection_of(n)) is not None and c not in evaluated
        ]
        self.count(counted)
        out = {}
        for name in names:
            collection = _collection_of(name)
            if collection is not None and collection in counted:
                out[name] = Fraction(self._counts[collection])
            else:
                out[name] = used.get(name, Fraction(0))
        return out


def recompute(namespace: str, registry: Registry) -> bool:
    """Bring every quota of ``namespace`` up to date; returns whether one
    changed meanwhile (a conflict: reconcile again)."""
    quotas = quotas_of(registry, namespace)
    if not quotas:
        return False
    objects = _Namespace(registry, namespace)
    rt = catalog().lookup("", "v1", "resourcequotas")
    again = False
    for quota in quotas:
        hard = (quota.get("spec") or {}).get("hard") or {}
        names = sorted(n for n in quota_usage.parse_list(hard) if quota_usage.tracks(quota, n))
        status = {
            "hard": dict(hard),
            "used": quota_usage.format_list(objects.used(quota, names)),
        }
        if _same(quota.get("status") or {}, status):
            continue
        quota["status"] = status
        try:
            registry.update(
                rt, namespace, quota["metadata"]["name"], quota,
                UpdateOptions(field_manager=FIELD_MANAGER, subresource="status"),
            )
        except StatusError as exc:
            if exc.code == 409:
                again = True
            elif exc.code != 404:
                raise
    return again


def _same(old: dict, new: dict) -> bool:
    """Equal as quantities (``1000m`` is ``1``), as kube compares them."""
    for field in ("hard", "used"):
        a = quota_usage.parse_list(old.get(field))
        b = quota_usage.parse_list(new.get(field))
        if a != b or set(old.get(field) or {}) != set(new.get(field) or {}):
            return False
    return True
