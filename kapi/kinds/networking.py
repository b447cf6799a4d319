"""Service, Endpoints, Ingress, IngressClass and NetworkPolicy.

Services get a cluster IP (from 10.96.0.0/12) and node ports (30000-32767)
the way kube's allocators hand them out, picked from the object's uid so that
every API server process agrees without a shared allocator; port rules are
kube's (``spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535``).
"""

from __future__ import annotations

import hashlib
import ipaddress
from typing import Any

from kapi.errors import Cause
from kapi.kinds.defaulting import default_string
from kapi.registry.strategy import Column, Object, Strategy

__all__ = [
    "KUBERNETES_SERVICE_IP",
    "EndpointsStrategy",
    "IngressClassStrategy",
    "IngressStrategy",
    "NetworkPolicyStrategy",
    "ServiceStrategy",
]

_SERVICE_NET = ipaddress.ip_network("10.96.0.0/12")
#: The ``default/kubernetes`` Service's address: the service network's first
#: (kube-apiserver's ``--service-cluster-ip-range``), never allocated to another.
KUBERNETES_SERVICE_IP = str(_SERVICE_NET.network_address + 1)
_NODE_PORTS = (30000, 32767)
_SERVICE_TYPES = ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName")


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def _port_causes(value: Any, path: str) -> list[Cause]:
    if not isinstance(value, int) or not 1 <= value <= 65535:
        return [
            Cause(
                "FieldValueInvalid",
                f"Invalid value: {value}: must be between 1 and 65535, inclusive",
                path,
            )
        ]
    return []


class ServiceStrategy(Strategy):
    status_subresource = True
    return_deleted_object = True

    def prepare_for_create(self, obj: Object) -> None:
        """Default type, protocols and targetPorts; allocate a cluster IP and node
        ports. MUTATES ``obj``."""
        obj["status"] = {"loadBalancer": {}}
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        kind = default_string(spec, "type", "ClusterIP")
        default_string(spec, "sessionAffinity", "None")
        uid = (obj.get("metadata") or {}).get("uid", "")
        for index, port in enumerate(spec.get("ports") or ()):
            if not isinstance(port, dict):
                continue
            default_string(port, "protocol", "TCP")
            if "targetPort" not in port and isinstance(port.get("port"), int):
                port["targetPort"] = port["port"]
            if kind in ("NodePort", "LoadBalancer") and "nodePort" not in port:
                low, high = _NODE_PORTS
                port["nodePort"] = low + _hash(f"{uid}/{index}") % (high - low + 1)
        if kind != "ExternalName":
            if not spec.get("clusterIP"):
                offset = 2 + _hash(uid) % (_SERVICE_NET.num_addresses - 3)
                spec["clusterIP"] = str(_SERVICE_NET.network_address + offset)
            spec.setdefault("clusterIPs", [spec["clusterIP"]])
            spec.setdefault("ipFamilies", ["IPv4"])
            spec.setdefault("ipFamilyPolicy", "SingleStack")
            spec.setdefault("internalTrafficPolicy", "Cluster")
        if kind in ("NodePort", "LoadBalancer"):
            default_string(spec, "externalTrafficPolicy", "Cluster")

    def prepare_for_update(self, obj: Object, old: Object) -> None:
        """Keep the allocated cluster IP when the client leaves it out. MUTATES ``obj``."""
        super().prepare_for_update(obj, old)
        spec, old_spec = obj.get("spec"), old.get("spec") or {}
        if isinstance(spec, dict):
            for key in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
                if (
                    key not in spec
                    and key in old_spec
                    and spec.get("type", "ClusterIP") != "ExternalName"
                ):
                    spec[key] = old_spec[key]
            default_string(spec, "type", "ClusterIP")
            default_string(spec, "sessionAffinity", "None")
            old_ports = {
                (p.get("port"), p.get("protocol", "TCP")): p
                for p in old_spec.get("ports") or ()
            }
            for port in spec.get("ports") or ():
                if isinstance(port, dict):
                    default_string(port, "protocol", "TCP")
                    if "targetPort" not in port and isinstance(port.get("port"), int):
                        port["targetPort"] = port["port"]
                    prev = old_ports.get((port.get("port"), port["protocol"]))
                    if (
                        prev
                        and "nodePort" in prev
                        and "nodePort" not in port
                        and spec["type"] in ("NodePort", "LoadBalancer")
                    ):
                        port["nodePort"] = prev["nodePort"]

    def validate(self, obj: Object) -> list[Cause]:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [Cause("FieldValueRequired", "Required value", "spec")]
        causes: list[Cause] = []
        kind = spec.get("type", "ClusterIP")
        if kind not in _SERVICE_TYPES:
            supported = ", ".join(f'"{t}"' for t in _SERVICE_TYPES)
            causes.append(
                Cause(
                    "FieldValueNotSupported",
                    f'Unsupported value: "{kind}": supported values: {supported}',
                    "spec.type",
                )
            )
        ports = spec.get("ports") or []
        if kind == "ExternalName":
            if not spec.get("externalName"):
                causes.append(
                    Cause("FieldValueRequired", "Required value", "spec.externalName")
                )
        elif not ports and spec.get("clusterIP") != "None":
            causes.append(Cause("FieldValueRequired", "Required value", "spec.ports"))
        names: set[str] = set()
        for i, port in enumerate(ports):
            at = f"spec.ports[{i}]"
            name = port.get("name")
            if len(ports) > 1 and not name:
                causes.append(
                    Cause("FieldValueRequired", "Required value", f"{at}.name")
                )
            elif name in names:
                causes.append(
                    Cause(
                        "FieldValueDuplicate",
                        f'Duplicate value: "{name}"',
                        f"{at}.name",
                    )
                )
            names.add(name or "")
            causes += _port_causes(port.get("port"), f"{at}.port")
            target = port.get("targetPort")
            if isinstance(target, int) and target != 0:
                causes += _port_causes(target, f"{at}.targetPort")
            node_port = port.get("nodePort")
            if node_port is not None:
                if kind not in ("NodePort", "LoadBalancer"):
                    causes.append(
                        Cause(
                            "FieldValueForbidden",
                            "Forbidden: may not be used when `type` is 'ClusterIP'",
                            f"{at}.nodePort",
                        )
                    )
                elif not _NODE_PORTS[0] <= node_port <= _NODE_PORTS[1]:
                    causes.append(
                        Cause(
                            "FieldValueInvalid",
                            f"Invalid value: {node_port}: provided port is not in the valid range. The range of valid ports is 30000-32767",
                            f"{at}.nodePort",
                        )
                    )
        return causes

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        causes = self.validate(obj)
        new_ip = (obj.get("spec") or {}).get("clusterIP")
        old_ip = (old.get("spec") or {}).get("clusterIP")
        if (
            old_ip
            and new_ip
            and new_ip != old_ip
            and (obj.get("spec") or {}).get("type") != "ExternalName"
        ):
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f'Invalid value: "{new_ip}": field is immutable',
                    "spec.clusterIPs[0]",
                )
            )
        return causes

    def table_columns(self) -> list[Column]:
        return [
            Column("Type", description="type determines how the Service is exposed."),
            Column(
                "Cluster-IP",
                description="clusterIP is the IP address of the service and is usually assigned randomly.",
            ),
            Column(
                "External-IP",
                description="externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.",
            ),
            Column(
                "Port(s)",
                description="The list of ports that are exposed by this service.",
            ),
        ]

    def table_definition(self) -> list[Column]:
        return [
            *super().table_definition(),
            Column(
                "Selector",
                priority=1,
                description="Route service traffic to pods with label keys and values matching this selector.",
            ),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        spec = obj.get("spec") or {}
        kind = spec.get("type", "ClusterIP")
        external = list(spec.get("externalIPs") or [])
        if kind == "ExternalName":
            shown = spec.get("externalName") or "<none>"
        elif kind == "LoadBalancer":
            ingress = ((obj.get("status") or {}).get("loadBalancer") or {}).get(
                "ingress"
            ) or []
            addrs = [i.get("ip") or i.get("hostname") for i in ingress] + external
            shown = ",".join(a for a in addrs if a) or "<pending>"
        else:
            shown = ",".join(external) or "<none>"
        ports = []
        for port in spec.get("ports") or ():
            text = str(port.get("port"))
            if port.get("nodePort"):
                text += f":{port['nodePort']}"
            ports.append(f"{text}/{port.get('protocol', 'TCP')}")
        return [
            kind,
            spec.get("clusterIP") or "<none>",
            shown,
            ",".join(ports) or "<none>",
        ]

    def table_row_cells(self, obj: Object) -> list[Any]:
        selector = (obj.get("spec") or {}).get("selector") or {}
        return [
            *super().table_row_cells(obj),
            ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>",
        ]


class EndpointsStrategy(Strategy):
    def table_columns(self) -> list[Column]:
        return [Column("Endpoints", description="Endpoints of the service")]

    def table_cells(self, obj: Object) -> list[Any]:
        out = []
        for subset in obj.get("subsets") or ():
            for addr in subset.get("addresses") or ():
                for port in subset.get("ports") or [{}]:
                    out.append(
                        f"{addr.get('ip')}:{port.get('port')}"
                        if port
                        else addr.get("ip")
                    )
        return [
            ",".join(out[:3]) + (f" + {len(out) - 3} more..." if len(out) > 3 else "")
            or "<none>"
        ]


class IngressStrategy(Strategy):
    status_subresource = True

    def validate(self, obj: Object) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes: list[Cause] = []
        if not spec.get("rules") and not spec.get("defaultBackend"):
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    'Invalid value: "": either `defaultBackend` or `rules` must be specified',
                    "spec",
                )
            )
        for i, rule in enumerate(spec.get("rules") or ()):
            for j, path in enumerate((rule.get("http") or {}).get("paths") or ()):
                at = f"spec.rules[{i}].http.paths[{j}]"
                kind = path.get("pathType")
                if not kind:
                    causes.append(
                        Cause(
                            "FieldValueRequired",
                            "Required value: pathType must be specified",
                            f"{at}.pathType",
                        )
                    )
                if kind in ("Exact", "Prefix") and not str(
                    path.get("path", "")
                ).startswith("/"):
                    causes.append(
                        Cause(
                            "FieldValueInvalid",
                            f'Invalid value: "{path.get("path", "")}": must be an absolute path',
                            f"{at}.path",
                        )
                    )
                backend = path.get("backend") or {}
                service = backend.get("service")
                if not service and not backend.get("resource"):
                    causes.append(
                        Cause(
                            "FieldValueInvalid",
                            'Invalid value: "": one backend must be specified',
                            f"{at}.backend",
                        )
                    )
                elif (
                    service
                    and not (service.get("port") or {}).get("number")
                    and not (service.get("port") or {}).get("name")
                ):
                    causes.append(
                        Cause(
                            "FieldValueInvalid",
                            'Invalid value: "": port name or number is required',
                            f"{at}.backend.service.port",
                        )
                    )
        return causes

    def table_columns(self) -> list[Column]:
        return [
            Column(
                "Class",
                description="The name of the IngressClass resource that should be used for ingress.",
            ),
            Column("Hosts", description="Hosts ports."),
            Column(
                "Address",
                description="Address is a list containing ingress points for the load-balancer",
            ),
            Column("Ports", description="Ports of TLS configurations that open"),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        spec = obj.get("spec") or {}
        hosts = [r.get("host") for r in spec.get("rules") or () if r.get("host")]
        ingress = ((obj.get("status") or {}).get("loadBalancer") or {}).get(
            "ingress"
        ) or []
        address = ",".join(i.get("ip") or i.get("hostname") or "" for i in ingress)
        return [
            spec.get("ingressClassName") or "<none>",
            ",".join(hosts) or "*",
            address,
            "80, 443" if spec.get("tls") else "80",
        ]


class IngressClassStrategy(Strategy):
    def table_columns(self) -> list[Column]:
        return [
            Column(
                "Controller",
                description="Controller that is responsible for handling this class.",
            ),
            Column(
                "Parameters",
                description="A reference to a resource with additional parameters.",
            ),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        spec = obj.get("spec") or {}
        params = spec.get("parameters")
        shown = f"{params.get('kind')}/{params.get('name')}" if params else "<none>"
        return [spec.get("controller", ""), shown]


class NetworkPolicyStrategy(Strategy):
    def table_columns(self) -> list[Column]:
        return [
            Column(
                "Pod-Selector",
                description="Selects the pods to which this NetworkPolicy object applies.",
            )
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        selector = (obj.get("spec") or {}).get("podSelector") or {}
        labels = selector.get("matchLabels") or {}
        return [",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "<none>"]
