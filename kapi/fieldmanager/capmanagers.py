"""At most ten Update entries: the oldest merge into ``ancient-changes``
(kube's ``capManagersManager``)."""

from __future__ import annotations

from kapi.fieldmanager.interface import Wrapper
from kapi.fieldmanager.managed import (
    Managed,
    VersionedSet,
    manager_identifier,
    parse_identifier,
)

__all__ = ["MAX_UPDATE_MANAGERS", "CapManagersManager"]

MAX_UPDATE_MANAGERS = 10
_ANCIENT = "ancient-changes"


def _cap(managed: Managed) -> Managed:
    updaters = [i for i, v in managed.fields.items() if not v.applied]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return managed
    updaters.sort(key=lambda i: managed.times.get(i) or "")
    for identifier in updaters[: len(updaters) - MAX_UPDATE_MANAGERS + 1]:
        versioned = managed.fields.pop(identifier)
        managed.times.pop(identifier, None)
        info = parse_identifier(identifier)
        bucket = manager_identifier(
            _ANCIENT, "Update", versioned.api_version, info.get("subresource", "")
        )
        previous = managed.fields.get(bucket)
        fields = versioned.fields | (previous.fields if previous else set())
        managed.fields[bucket] = VersionedSet(fields, versioned.api_version, False)
    return managed


class CapManagersManager(Wrapper):
    def update(self, live, new, managed, manager):
        obj, managed = self.inner.update(live, new, managed, manager)
        return obj, _cap(managed)
