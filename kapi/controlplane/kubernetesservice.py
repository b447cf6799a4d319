"""The ``default/kubernetes`` Service, after kube-apiserver's bootstrap
controller (``pkg/controlplane/controller.go``) and endpoint reconciler
(``pkg/controlplane/reconcilers``).

The Service (ClusterIP, the first address of the service network, port 443
``https`` to the API's port, labels ``component: apiserver`` and ``provider:
kubernetes``, no selector) is created when missing; its ports and type are put
back when edited, nothing else, as kube does. Its Endpoints (labelled
``endpointslice.kubernetes.io/skip-mirror``) and its EndpointSlice (labelled
``kubernetes.io/service-name``) name the address and port ``serve`` listens on,
as recorded in the data directory (``kapi.runtime.endpoint``), and are
rewritten when they say anything else.
"""

from __future__ import annotations

import ipaddress
import socket
from pathlib import Path

from django.conf import settings

from kapi.errors import StatusError
from kapi.kinds.networking import KUBERNETES_SERVICE_IP
from kapi.lifecycle import FIELD_MANAGER
from kapi.registry.catalog import catalog
from kapi.registry.options import CreateOptions, UpdateOptions
from kapi.registry.store import Registry
from kapi.runtime.endpoint import read_endpoint

__all__ = ["NAME", "NAMESPACE", "advertised", "reconcile"]

NAMESPACE, NAME = "default", "kubernetes"
SERVICE_PORT = 443
_PORT_NAME = "https"


def advertised() -> tuple[str, int] | None:
    """(IP, port) clients reach the API at, from ``<data>/server.json``; None
    before ``serve`` recorded one."""
    found = read_endpoint(Path(settings.DATA_DIR))
    if found is None:
        return None
    host = found.client_host.strip("[]")
    try:
        return str(ipaddress.ip_address(host)), found.port
    except ValueError:
        pass
    try:
        return socket.getaddrinfo(host, found.port, proto=socket.IPPROTO_TCP)[0][4][0], found.port
    except OSError:
        return "127.0.0.1", found.port


def reconcile(registry: Registry) -> None:
    """Make the Service, its Endpoints and its EndpointSlice what they must be."""
    where = advertised()
    if where is None:
        return
    ip, port = where
    _service(registry, port)
    _endpoints(registry, ip, port)
    _endpoint_slice(registry, ip, port)


def _ports(port: int) -> list[dict]:
    return [{"name": _PORT_NAME, "port": port, "protocol": "TCP"}]


def _service(registry: Registry, port: int) -> None:
    ports = [{"name": _PORT_NAME, "protocol": "TCP", "port": SERVICE_PORT, "targetPort": port}]
    body = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": NAME, "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {
            "type": "ClusterIP",
            "clusterIP": KUBERNETES_SERVICE_IP,
            "sessionAffinity": "None",
            "ports": ports,
        },
    }

    def differs(live: dict) -> bool:
        spec = live.get("spec") or {}
        now = [
            {k: p.get(k) for k in ("name", "protocol", "port", "targetPort")}
            for p in spec.get("ports") or ()
            if isinstance(p, dict)
        ]
        return now != ports or spec.get("type") != "ClusterIP"

    def mend(live: dict) -> None:
        live["spec"]["ports"] = ports
        live["spec"]["type"] = "ClusterIP"

    _ensure(registry, "services", body, differs, mend)


def _endpoints(registry: Registry, ip: str, port: int) -> None:
    subsets = [{"addresses": [{"ip": ip}], "ports": _ports(port)}]
    body = {
        "apiVersion": "v1",
        "kind": "Endpoints",
        "metadata": {"name": NAME, "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
        "subsets": subsets,
    }

    def mend(live: dict) -> None:
        live["subsets"] = subsets

    _ensure(registry, "endpoints", body, lambda live: live.get("subsets") != subsets, mend)


def _endpoint_slice(registry: Registry, ip: str, port: int) -> None:
    family = "IPv6" if ipaddress.ip_address(ip).version == 6 else "IPv4"
    want = {
        "addressType": family,
        "endpoints": [{"addresses": [ip], "conditions": {"ready": True}}],
        "ports": _ports(port),
    }
    body = {
        "apiVersion": "discovery.k8s.io/v1",
        "kind": "EndpointSlice",
        "metadata": {"name": NAME, "labels": {"kubernetes.io/service-name": NAME}},
        **want,
    }

    def differs(live: dict) -> bool:
        return any(live.get(k) != v for k, v in want.items())

    def mend(live: dict) -> None:
        live.update(want)

    _ensure(registry, "endpointslices", body, differs, mend, group="discovery.k8s.io")


def _ensure(registry: Registry, resource: str, body: dict, differs, mend, group: str = "") -> None:
    rt = catalog().lookup(group, "v1", resource)
    try:
        live = registry.get(rt, NAMESPACE, NAME)
    except StatusError as exc:
        if exc.code != 404:
            raise
        try:
            registry.create(rt, NAMESPACE, body, CreateOptions(field_manager=FIELD_MANAGER))
        except StatusError as exc:
            if exc.code != 409:  # made by another pass meanwhile; its change asks again
                raise
        return
    if differs(live):
        mend(live)
        try:
            registry.update(rt, NAMESPACE, NAME, live, UpdateOptions(field_manager=FIELD_MANAGER))
        except StatusError as exc:
            if exc.code not in (404, 409):
                raise
