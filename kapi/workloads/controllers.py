"""The workload controllers on the runtime (``kapi.controllers``).

Each reconciles keys ``namespace/name`` of one kind; which changes map to them
is the watch (``kapi.workloads.watch``). A reconcile that must look again at
a set time returns ``requeue_after`` (a Deployment's progress deadline, a Job's
active deadline, a CronJob's next schedule).
"""

from __future__ import annotations

from kapi.controllers.controller import Controller, Item
from kapi.errors import StatusError
from kapi.registry.store import Registry
from kapi.workloads import cronjob, deployment, endpoints, job, replicaset
from kapi.workloads.watch import WATCH

__all__ = ["CONTROLLERS", "WATCHES"]


class _Workload(Controller):
    quiet_errors = (StatusError,)
    acts_on_current_state = True

    def __init__(self, name: str, sync) -> None:
        self.name = name
        self._sync = sync

    def reconcile(self, item: Item, registry: Registry) -> float | None:
        return self._sync(item.namespace, item.name, registry)


CONTROLLERS = [
    _Workload("replicaset", replicaset.sync_rs),
    _Workload("replicationcontroller", replicaset.sync_rc),
    _Workload("deployment", deployment.sync),
    _Workload("job", job.sync),
    _Workload("cronjob", cronjob.sync),
    _Workload("endpoints", endpoints.sync),
]
WATCHES = [WATCH]
