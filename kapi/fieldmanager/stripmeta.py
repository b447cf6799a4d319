"""Nobody owns system fields: ``apiVersion``, ``kind`` and the server-set metadata
(kube's ``stripMetaManager``)."""

from __future__ import annotations

from kapi.fieldmanager.interface import Wrapper
from kapi.fieldmanager.managed import Managed

__all__ = ["STRIPPED", "StripMetaManager"]

STRIPPED = frozenset(
    [
        ("f:apiVersion",),
        ("f:kind",),
        ("f:metadata", "f:name"),
        ("f:metadata", "f:namespace"),
        ("f:metadata", "f:creationTimestamp"),
        ("f:metadata", "f:selfLink"),
        ("f:metadata", "f:uid"),
        ("f:metadata", "f:clusterName"),
        ("f:metadata", "f:generation"),
        ("f:metadata", "f:managedFields"),
        ("f:metadata", "f:resourceVersion"),
        ("f:metadata",),
    ]
)


def _strip(managed: Managed) -> Managed:
    for identifier, versioned in list(managed.fields.items()):
        versioned.fields = {
            p
            for p in versioned.fields
            if p not in STRIPPED and p[:2] != ("f:metadata", "f:managedFields")
        }
        if not versioned.fields:
            del managed.fields[identifier]
    return managed


class StripMetaManager(Wrapper):
    def update(self, live, new, managed, manager):
        obj, managed = self.inner.update(live, new, managed, manager)
        return obj, _strip(managed)

    def apply(self, live, config, managed, manager, force):
        obj, managed = self.inner.apply(live, config, managed, manager, force)
        return obj, _strip(managed)
