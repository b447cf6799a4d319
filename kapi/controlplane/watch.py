"""The control plane's watch: which changes map to which keys of its
controllers (``kapi.controlplane.controllers``), on the lifecycle's feed.

* a namespace created or changed (not being deleted), or its
  ``kube-root-ca.crt`` ConfigMap changed or deleted → ``root-ca`` of that
  namespace;
* ``default/kubernetes`` of Services, Endpoints or EndpointSlices changed or
  deleted → ``kubernetes-service``.

The resync asks for every namespace lacking its ConfigMap, and for the
Service once (``serve`` asks at every start too: the address may have moved).
"""

from __future__ import annotations

from kapi.controllers import feed, workqueue
from kapi.controlplane import kubernetesservice, rootca
from kapi.lifecycle.watch import FEED, NAMESPACES
from kapi.storage import Key, default_storage
from kapi.storage.interface import Change

__all__ = ["ROOT_CA", "SERVICE", "WATCH", "request_all", "root_ca_key", "service_key"]

ROOT_CA = "root-ca"
SERVICE = "kubernetes-service"
#: The objects that make up the ``default/kubernetes`` Service (stored group, resource).
SERVICE_PARTS = frozenset({("", "services"), ("", "endpoints"), ("discovery.k8s.io", "endpointslices")})


def root_ca_key(namespace: str) -> tuple:
    return (ROOT_CA, namespace, *NAMESPACES, "", namespace, "")


def service_key() -> tuple:
    ns, name = kubernetesservice.NAMESPACE, kubernetesservice.NAME
    return (SERVICE, f"{ns}/{name}", "", "services", ns, name, "")


def is_part_of_service(group: str, resource: str, namespace: str, name: str) -> bool:
    return (
        name == kubernetesservice.NAME
        and namespace == kubernetesservice.NAMESPACE
        and (group, resource) in SERVICE_PARTS
    )


class _Plan(feed.Plan):
    def __init__(self) -> None:
        self.rows: dict[tuple, str] = {}  # key row -> the request behind it

    def add(self, change: Change) -> None:
        k = change.key
        if (k.group, k.resource) == NAMESPACES:
            if change.type != "DELETED" and "deletionTimestamp" not in change.metadata:
                self.rows[root_ca_key(k.name)] = change.request_id
        elif (k.group, k.resource, k.name) == ("", "configmaps", rootca.CONFIGMAP):
            self.rows[root_ca_key(k.namespace)] = change.request_id
        elif is_part_of_service(k.group, k.resource, k.namespace, k.name):
            self.rows[service_key()] = change.request_id

    def ask(self) -> int:
        return workqueue.request([(*row, request) for row, request in self.rows.items()])


def request_all(bump: bool = False) -> int:
    """Ask for the Service and for every namespace lacking its ``kube-root-ca.crt``."""
    lacking = default_storage().namespaces_without(NAMESPACES, Key("", "configmaps", "", rootca.CONFIGMAP))
    rows = [service_key(), *(root_ca_key(o.key.name) for o in lacking)]
    return workqueue.request(rows, bump=bump)


def _resync(full: bool) -> int:
    return request_all()


WATCH = feed.Watch(FEED, _Plan, _resync, reads=("deletionTimestamp",))
