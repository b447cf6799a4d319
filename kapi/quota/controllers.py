"""The ResourceQuota controller on the runtime (``kapi.controllers``).

Key: a quota (its uid; namespace and name in the item). Reconciling it writes
its ``status`` once (kube's ``syncResourceQuota``): ``hard`` is ``spec.hard``;
``used`` is the usage counted now (``kapi.quota.usage``) over what it said
before, kept to the resources ``hard`` names. Counting happens inside the
status update's read-modify-write, so a charge that quota admission wrote
meanwhile makes the update retry on the fresh quota rather than be lost.
Which changes ask for it: ``kapi.quota.watch``.
"""

from __future__ import annotations

from kapi.controllers.controller import Controller, Item
from kapi.errors import StatusError
from kapi.quota import resources, usage
from kapi.quota.watch import NAME, WATCH
from kapi.registry.catalog import catalog
from kapi.registry.options import UpdateOptions
from kapi.registry.store import Registry

__all__ = ["CONTROLLERS", "FIELD_MANAGER", "WATCHES", "desired_status"]

FIELD_MANAGER = "resourcequota-controller"


def desired_status(quota: dict) -> dict:
    """The status the controller writes for ``quota`` as it stands."""
    hard = dict((quota.get("spec") or {}).get("hard") or {})
    previous = resources.parsed((quota.get("status") or {}).get("used"))
    used = {**previous, **usage.calculate(quota)}
    return {"hard": hard, "used": resources.formatted(resources.mask(used, hard))}


class _Quota(Controller):
    name = NAME
    acts_on_current_state = True
    quiet_errors = (StatusError,)

    def reconcile(self, item: Item, registry: Registry) -> float | None:
        rt = catalog().lookup("", "v1", "resourcequotas")

        def mutate(quota: dict) -> dict:
            quota["status"] = desired_status(quota)
            return quota

        try:
            registry.update_with(
                rt, item.namespace, item.name, mutate,
                UpdateOptions(subresource="status", field_manager=FIELD_MANAGER),
            )
        except StatusError as exc:
            if exc.code != 404:
                raise
        return None


CONTROLLERS = [_Quota()]
WATCHES = [WATCH]
