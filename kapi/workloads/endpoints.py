"""The EndpointSlice and Endpoints of a Service with a selector.

After kube's endpointslice controller (``staging/src/k8s.io/endpointslice``:
``podToEndpoint``, ``getEndpointPorts``, ``newEndpointSlice``,
``setEndpointSliceLabels``) and endpoints controller (``syncService``). A
Pod is an endpoint once it has an IP (``status.podIPs``, else
``status.podIP``) and is not finished; it is ready per its ``Ready``
condition. With no such Pod the Service still has one EndpointSlice (kube's
placeholder: no endpoints, no ports) and an Endpoints without subsets.
Slices are named ``<service>-<5 random>``, labelled with the Service's labels,
``kubernetes.io/service-name`` and ``endpointslice.kubernetes.io/managed-by``,
and controlled by the Service (the garbage collector removes them with it);
the Endpoints is named as the Service and deleted with it here. Services
without a selector, and ExternalName ones, are left alone.
"""

from __future__ import annotations

from kapi.errors import StatusError
from kapi.registry.store import Registry
from kapi.selectors.labels import label_selector_from_dict
from kapi.workloads import api, ownership, pods
from kapi.workloads.api import Object

__all__ = ["MANAGED_BY", "SERVICE_NAME", "sync"]

SERVICE_NAME = "kubernetes.io/service-name"
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
CONTROLLER = "endpointslice-controller.k8s.io"
HEADLESS = "service.kubernetes.io/headless"
TRIGGER = "endpoints.kubernetes.io/last-change-trigger-time"
_RESERVED = (SERVICE_NAME, MANAGED_BY, HEADLESS)


def sync(namespace: str, name: str, registry: Registry) -> None:
    svc_rt = api.resource("", "services")
    ep_rt = api.resource("", "endpoints")
    service = api.get(registry, svc_rt, namespace, name)
    if service is None:
        current = api.get(registry, ep_rt, namespace, name)
        if current is not None:
            api.delete(registry, ep_rt, current)
        return
    spec = service.get("spec") or {}
    if spec.get("type") == "ExternalName" or not spec.get("selector"):
        return
    selected = api.list_objects(
        registry, api.resource("", "pods"), namespace, label_selector_from_dict({"matchLabels": spec["selector"]})
    )
    endpoint_pods = [p for p in selected if _is_endpoint(p, service)]
    _sync_slices(registry, service, endpoint_pods)
    _sync_endpoints(registry, ep_rt, service, endpoint_pods)


def _ips(pod: Object) -> list[str]:
    status = pod.get("status") or {}
    ips = [p.get("ip") for p in status.get("podIPs") or () if isinstance(p, dict) and p.get("ip")]
    if not ips and status.get("podIP"):
        ips = [status["podIP"]]
    return ips


def _is_endpoint(pod: Object, service: Object) -> bool:
    """kube's ``ShouldPodBeInEndpoints``."""
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Failed", "Succeeded") or not _ips(pod):
        return False
    publish = (service.get("spec") or {}).get("publishNotReadyAddresses")
    return "deletionTimestamp" not in pod["metadata"] or bool(publish)


def _find_port(pod: Object, port: dict) -> int | None:
    target = port.get("targetPort", port.get("port"))
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    for container in (pod.get("spec") or {}).get("containers") or ():
        for cport in container.get("ports") or ():
            if cport.get("name") == target and cport.get("protocol", "TCP") == port.get("protocol", "TCP"):
                return cport.get("containerPort")
    return None


def _ports(service: Object, pod: Object) -> list[dict]:
    out = []
    for port in (service.get("spec") or {}).get("ports") or ():
        number = _find_port(pod, port)
        if number is None:
            continue
        entry = {"name": port.get("name", ""), "protocol": port.get("protocol", "TCP"), "port": number}
        if port.get("appProtocol"):
            entry["appProtocol"] = port["appProtocol"]
        out.append(entry)
    return out


def _endpoint(pod: Object, service: Object, ips: list[str]) -> dict:
    serving = pods.ready(pod)
    terminating = "deletionTimestamp" in pod["metadata"]
    publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
    meta = pod["metadata"]
    ep: dict = {
        "addresses": ips,
        "conditions": {"ready": publish or (serving and not terminating), "serving": serving, "terminating": terminating},
        "targetRef": {"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"]},
    }
    node = (pod.get("spec") or {}).get("nodeName")
    if node:
        ep["nodeName"] = node
    return ep


def _labels(service: Object) -> dict:
    labels = {k: v for k, v in (service["metadata"].get("labels") or {}).items() if k not in _RESERVED}
    if (service.get("spec") or {}).get("clusterIP") in (None, "", "None"):
        labels[HEADLESS] = ""
    labels[SERVICE_NAME] = service["metadata"]["name"]
    labels[MANAGED_BY] = CONTROLLER
    return labels


def _sync_slices(registry: Registry, service: Object, endpoint_pods: list[Object]) -> None:
    rt = api.resource("discovery.k8s.io", "endpointslices")
    meta = service["metadata"]
    families = (service.get("spec") or {}).get("ipFamilies") or ["IPv4"]
    # Endpoints grouped by their port list: one slice per (family, ports).
    want: dict[tuple, list[dict]] = {}
    for family in families:
        for pod in endpoint_pods:
            ips = [ip for ip in _ips(pod) if (":" in ip) == (family == "IPv6")]
            if ips:
                ports = _ports(service, pod)
                key = (family, tuple(tuple(sorted(p.items())) for p in ports))
                want.setdefault(key, []).append(_endpoint(pod, service, ips))
    if not want:
        want[(families[0], None)] = []
    existing = [
        s
        for s in api.list_objects(registry, rt, meta["namespace"], label_selector_from_dict(
            {"matchLabels": {SERVICE_NAME: meta["name"], MANAGED_BY: CONTROLLER}}
        ))
        if any(r.get("uid") == meta["uid"] for r in s["metadata"].get("ownerReferences") or ())
    ]
    labels = _labels(service)
    for (family, port_key), endpoints in want.items():
        ports = [dict(p) for p in port_key] if port_key is not None else None
        body = {
            "addressType": family,
            "endpoints": sorted(endpoints, key=lambda e: e["targetRef"]["name"]) or None,
            "ports": ports or None,
        }
        match = next((s for s in existing if s.get("addressType") == family), None)
        if match is None:
            slice_: Object = {
                "apiVersion": "discovery.k8s.io/v1",
                "kind": "EndpointSlice",
                "metadata": {
                    "generateName": f"{meta['name']}-",
                    "labels": labels,
                    "annotations": {TRIGGER: api.now()},
                    "ownerReferences": [{**ownership.controller_ref(service), "apiVersion": "v1", "kind": "Service"}],
                },
                **body,
            }
            api.create(registry, rt, meta["namespace"], slice_)
            continue
        existing.remove(match)
        current = {k: match.get(k) for k in body}
        if current != body or match["metadata"].get("labels") != labels:

            def put(obj: Object, body=body) -> Object:
                obj.update(body)
                obj["metadata"]["labels"] = labels
                obj["metadata"].setdefault("annotations", {})[TRIGGER] = api.now()
                return obj

            api.update(registry, rt, match, put)
    for extra in existing:
        api.delete(registry, rt, extra)


def _sync_endpoints(registry: Registry, rt, service: Object, endpoint_pods: list[Object]) -> None:
    meta = service["metadata"]
    ready, not_ready, ports = [], [], None
    for pod in endpoint_pods:
        pmeta = pod["metadata"]
        address = {
            "ip": _ips(pod)[0],
            "targetRef": {"kind": "Pod", "namespace": pmeta["namespace"], "name": pmeta["name"], "uid": pmeta["uid"]},
        }
        node = (pod.get("spec") or {}).get("nodeName")
        if node:
            address["nodeName"] = node
        publish = bool((service.get("spec") or {}).get("publishNotReadyAddresses"))
        (ready if publish or pods.ready(pod) else not_ready).append(address)
        ports = ports or [
            {k: v for k, v in p.items() if k in ("name", "port", "protocol", "appProtocol") and v != ""}
            for p in _ports(service, pod)
        ]
    subsets = []
    if ready or not_ready:
        subset: dict = {}
        if ready:
            subset["addresses"] = sorted(ready, key=lambda a: a["ip"])
        if not_ready:
            subset["notReadyAddresses"] = sorted(not_ready, key=lambda a: a["ip"])
        if ports:
            subset["ports"] = ports
        subsets.append(subset)
    labels = dict(meta.get("labels") or {})
    if (service.get("spec") or {}).get("clusterIP") in (None, "", "None"):
        labels[HEADLESS] = ""
    else:
        labels.pop(HEADLESS, None)
    current = api.get(registry, rt, meta["namespace"], meta["name"])
    if current is None:
        body: Object = {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": meta["name"], "annotations": {TRIGGER: api.now()}},
        }
        if labels:
            body["metadata"]["labels"] = labels
        if subsets:
            body["subsets"] = subsets
        try:
            api.create(registry, rt, meta["namespace"], body)
        except StatusError as exc:
            if exc.code != 409:
                raise
        return
    if (current.get("subsets") or []) == subsets and (current["metadata"].get("labels") or {}) == labels:
        return

    def put(obj: Object) -> Object:
        if subsets:
            obj["subsets"] = subsets
        else:
            obj.pop("subsets", None)
        if labels:
            obj["metadata"]["labels"] = labels
        else:
            obj["metadata"].pop("labels", None)
        obj["metadata"].setdefault("annotations", {})[TRIGGER] = api.now()
        return obj

    api.update(registry, rt, current, put)
