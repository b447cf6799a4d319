"""The deletion lifecycle's controllers on the runtime (``kapi.controllers``).

Each reconciles one kind of key; which changes map to them is the lifecycle's
watch (``kapi.lifecycle.watch``):

* ``attempt`` (an object's uid): check its owners (``gc.attempt``);
* ``owner`` (an owner's uid): handle its dependents and GC finalizers (``gc.owner``);
* ``namespace`` (a namespace's uid): its default ServiceAccount, or its
  termination (``namespaces.process``);
* ``delete`` (an object's uid, in a terminating namespace): delete it; these
  commit in groups (``namespaces.delete_content_item``);
* ``aggregate`` (a ClusterRole's uid): write its aggregated rules (``aggregation.sync``).
"""

from __future__ import annotations

from kapi.controllers.controller import Controller, Item
from kapi.errors import StatusError
from kapi.lifecycle import aggregation, gc, namespaces, objects
from kapi.lifecycle.watch import WATCH
from kapi.registry.store import Registry

__all__ = ["CONTROLLERS", "WATCHES"]

_EXPECTED = (StatusError, objects.TypeNotServed)


class _Attempt(Controller):
    name = "attempt"
    quiet_errors = _EXPECTED

    def reconcile(self, item: Item, registry: Registry) -> float | None:
        gc.attempt(item.key, registry)
        return None


class _Owner(Controller):
    name = "owner"
    acts_on_current_state = True
    quiet_errors = _EXPECTED

    def reconcile(self, item: Item, registry: Registry) -> float | None:
        return 0.0 if gc.owner(item.key, registry) else None


class _Namespace(Controller):
    name = "namespace"
    first = True
    acts_on_current_state = True
    quiet_errors = _EXPECTED

    def reconcile(self, item: Item, registry: Registry) -> float | None:
        return namespaces.process(item.key, registry)


class _Delete(Controller):
    name = "delete"
    grouped = True
    quiet_errors = _EXPECTED

    def reconcile(self, item: Item, registry: Registry) -> float | None:
        namespaces.delete_content_item(item, registry)
        return None


class _Aggregate(Controller):
    name = "aggregate"
    quiet_errors = _EXPECTED

    def reconcile(self, item: Item, registry: Registry) -> float | None:
        aggregation.sync(item.name, item.key, registry)
        return None


CONTROLLERS = [_Attempt(), _Owner(), _Namespace(), _Delete(), _Aggregate()]
WATCHES = [WATCH]
