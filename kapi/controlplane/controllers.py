"""The control plane's controllers on the runtime (``kapi.controllers``):

* ``root-ca`` (a namespace's name): its ``kube-root-ca.crt`` (``rootca.publish``);
* ``kubernetes-service`` (``default/kubernetes``): the Service, its Endpoints
  and EndpointSlice (``kubernetesservice.reconcile``).

Which changes map to them: ``kapi.controlplane.watch``.
"""

from __future__ import annotations

from kapi.controllers.controller import Controller, Item
from kapi.controlplane import kubernetesservice, rootca
from kapi.controlplane.watch import ROOT_CA, SERVICE, WATCH
from kapi.errors import StatusError
from kapi.registry.store import Registry

__all__ = ["CONTROLLERS", "WATCHES"]


class _RootCA(Controller):
    name = ROOT_CA
    quiet_errors = (StatusError,)

    def reconcile(self, item: Item, registry: Registry) -> float | None:
        rootca.publish(item.name, registry)
        return None


class _KubernetesService(Controller):
    name = SERVICE
    quiet_errors = (StatusError,)

    def reconcile(self, item: Item, registry: Registry) -> float | None:
        kubernetesservice.reconcile(registry)
        return None


CONTROLLERS = [_RootCA(), _KubernetesService()]
WATCHES = [WATCH]
