"""Times and per-manager merging of Update entries (kube's ``managedFieldsUpdater``).

An update runs as a transient manager; whatever it took is merged into the
writer's previous entry, whose time is then refreshed. An apply refreshes the
applier's time when the object changed.
"""

from __future__ import annotations

from kapi.clock import now_rfc3339
from kapi.fieldmanager.interface import Wrapper
from kapi.fieldmanager.managed import VersionedSet

__all__ = ["ManagedFieldsUpdater", "now"]

_SELF = "current-operation"


#: The time of a managedFields entry: whole seconds.
now = now_rfc3339


class ManagedFieldsUpdater(Wrapper):
    def update(self, live, new, managed, manager):
        obj, managed = self.inner.update(live, new, managed, _SELF)
        own = managed.fields.pop(_SELF, None)
        if own is not None:
            previous = managed.fields.get(manager)
            fields = own.fields | (previous.fields if previous else set())
            managed.fields[manager] = VersionedSet(fields, own.api_version, own.applied)
            managed.times[manager] = now()
        return obj, managed

    def apply(self, live, config, managed, manager, force):
        obj, managed = self.inner.apply(live, config, managed, manager, force)
        if obj is not None or manager not in managed.times:
            managed.times[manager] = now()
        return obj, managed
