"""The quota controller on the runtime (``kapi.controllers``):
``resource-quota`` (a namespace's name) recomputes the status of every
ResourceQuota in it (``controller.recompute``). Which changes map to it:
``kapi.quota.watch``.
"""

from __future__ import annotations

from kapi.controllers.controller import Controller, Item
from kapi.errors import StatusError
from kapi.quota.controller import recompute
from kapi.quota.watch import NAME, WATCH
from kapi.registry.store import Registry

__all__ = ["CONTROLLERS", "WATCHES"]


class _ResourceQuota(Controller):
    name = NAME
    quiet_errors = (StatusError,)

    def reconcile(self, item: Item, registry: Registry) -> float | None:
        return 0.0 if recompute(item.name, registry) else None


CONTROLLERS = [_ResourceQuota()]
WATCHES = [WATCH]
