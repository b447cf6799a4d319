"""The catalog of served resource types, indexed the ways requests look them up.

Built-in types are fixed; custom resources join at run time (CRDs), so callers
ask ``catalog()`` on every request instead of keeping a reference.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Iterable

from kapi.registry.builtin import BUILTIN_TYPES
from kapi.registry.resource import ResourceType

__all__ = ["Catalog", "catalog"]

#: Preferred order of groups in discovery, as kube-apiserver orders them.
_GROUP_ORDER = (
    "",
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "resource.k8s.io",
)


class Catalog:
    def __init__(self, types: Iterable[ResourceType]) -> None:
        self._types = list(types)
        self._by_gvr: dict[tuple[str, str, str], ResourceType] = {}
        self._groups: OrderedDict[str, list[str]] = OrderedDict()
        order = {g: i for i, g in enumerate(_GROUP_ORDER)}
        for rt in sorted(self._types, key=lambda t: (order.get(t.group, len(order)), t.group)):
            self._by_gvr[(rt.group, rt.version, rt.plural)] = rt
            versions = self._groups.setdefault(rt.group, [])
            if rt.version not in versions:
                versions.append(rt.version)

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_gvr.get((group, version, plural))

    def types(self) -> list[ResourceType]:
        return list(self._types)

    def groups(self) -> list[tuple[str, list[str]]]:
        """(group, versions with the preferred first) in discovery order; core first."""
        return [(g, list(v)) for g, v in self._groups.items()]

    def has_group_version(self, group: str, version: str) -> bool:
        return version in self._groups.get(group, [])

    def resources(self, group: str, version: str) -> list[ResourceType]:
        return [t for t in self._types if t.group == group and t.version == version]

    def for_kind(self, group: str, version: str, kind: str) -> ResourceType | None:
        for t in self._types:
            if t.group == group and t.version == version and t.kind == kind:
                return t
        return None


_builtin = Catalog(BUILTIN_TYPES)


def catalog() -> Catalog:
    """The catalog serving the current request."""
    return _builtin
