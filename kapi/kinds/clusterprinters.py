"""Table columns of the cluster's plumbing kinds, as kube prints them.

Ported from kube's ``pkg/printers/internalversion/printers.go`` (and
kube-aggregator's printer for APIService): ResourceQuota, the storage kinds
CSIDriver, CSINode and VolumeAttachment, API Priority and Fairness's
FlowSchema and PriorityLevelConfiguration, ValidatingAdmissionPolicy and its
binding, IPAddress and ServiceCIDR, and resource.k8s.io's ResourceClaim
and ResourceSlice (DeviceClass and ResourceClaimTemplate print NAME and AGE,
the default). Booleans that kube
prints from a Go ``bool`` stay JSON booleans (kubectl prints ``true``).
"""

from __future__ import annotations

from typing import Any

from kapi.kinds.scale import selector_string
from kapi.registry.strategy import (
    AGE_COLUMN,
    NAME_COLUMN,
    Column,
    Object,
    Strategy,
    object_age,
)

__all__ = [
    "APIServiceStrategy",
    "CSIDriverStrategy",
    "CSINodeStrategy",
    "FlowSchemaStrategy",
    "IPAddressStrategy",
    "PriorityLevelConfigurationStrategy",
    "ResourceClaimStrategy",
    "ResourceQuotaStrategy",
    "ResourceSliceStrategy",
    "ServiceCIDRStrategy",
    "ValidatingAdmissionPolicyBindingStrategy",
    "ValidatingAdmissionPolicyStrategy",
    "VolumeAttachmentStrategy",
]


def _spec(obj: Object) -> dict:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _status(obj: Object) -> dict:
    status = obj.get("status")
    return status if isinstance(status, dict) else {}


def _name(obj: Object) -> str:
    return (obj.get("metadata") or {}).get("name", "")


def _flag(value: Any, default: bool) -> bool:
    return value if isinstance(value, bool) else default


class ResourceQuotaStrategy(Strategy):
    """REQUEST and LIMIT: ``resource: used/hard`` for each hard limit, the
    ``limits.*`` ones under LIMIT, sorted by name."""

    def table_columns(self) -> list[Column]:
        return [
            Column("Request", description="Request represents a minimum amount of cpu/memory that a container may consume."),
            Column("Limit", description="Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        status = _status(obj)
        hard = status.get("hard") if isinstance(status.get("hard"), dict) else {}
        used = status.get("used") if isinstance(status.get("used"), dict) else {}
        requests, limits = [], []
        for resource in sorted(hard):
            pieces = resource.split(".")
            into = limits if len(pieces) > 1 and pieces[0] == "limits" else requests
            into.append(f"{resource}: {used.get(resource, '0')}/{hard[resource]}")
        return [", ".join(requests), ", ".join(limits)]


class CSIDriverStrategy(Strategy):
    def table_columns(self) -> list[Column]:
        return [
            Column("AttachRequired", type="boolean", description="attachRequired indicates this CSI volume driver requires an attach operation."),
            Column("PodInfoOnMount", type="boolean", description="podInfoOnMount indicates this CSI volume driver requires additional pod information during mount operations."),
            Column("StorageCapacity", type="boolean", description="storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report."),
            Column("TokenRequests", description="tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication."),
            Column("RequiresRepublish", type="boolean", description="requiresRepublish indicates the CSI driver wants NodePublishVolume being periodically called to reflect any possible change in the mounted volume."),
            Column("Modes", description="volumeLifecycleModes defines what kind of volumes this CSI volume driver supports."),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        spec = _spec(obj)
        requests = spec.get("tokenRequests")
        tokens = "<unset>"
        if isinstance(requests, list):
            tokens = ",".join(str(t.get("audience", "")) for t in requests if isinstance(t, dict))
        modes = ",".join(str(m) for m in spec.get("volumeLifecycleModes") or ()) or "<none>"
        return [
            _flag(spec.get("attachRequired"), True),
            _flag(spec.get("podInfoOnMount"), False),
            _flag(spec.get("storageCapacity"), False),
            tokens,
            _flag(spec.get("requiresRepublish"), False),
            modes,
        ]


class CSINodeStrategy(Strategy):
    def table_columns(self) -> list[Column]:
        return [Column("Drivers", type="integer", description="Drivers indicates the number of CSI drivers registered on the node")]

    def table_cells(self, obj: Object) -> list[Any]:
        return [len(_spec(obj).get("drivers") or ())]


class VolumeAttachmentStrategy(Strategy):
    def table_columns(self) -> list[Column]:
        return [
            Column("Attacher", format="name", description="attacher indicates the name of the volume driver that MUST handle this request."),
            Column("PV", description="persistentVolumeName represents the name of the persistent volume to attach."),
            Column("Node", description="nodeName represents the node that the volume should be attached to."),
            Column("Attached", type="boolean", description="attached indicates the volume is successfully attached."),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        spec = _spec(obj)
        source = spec.get("source") if isinstance(spec.get("source"), dict) else {}
        return [
            spec.get("attacher", ""),
            source.get("persistentVolumeName") or "",
            spec.get("nodeName", ""),
            _flag(_status(obj).get("attached"), False),
        ]


class FlowSchemaStrategy(Strategy):
    """AGE comes before MISSINGPL (whether the priority level is dangling)."""

    def table_definition(self) -> list[Column]:
        return [
            NAME_COLUMN,
            Column("PriorityLevel", description="`name` is the name of the priority level configuration being referenced Required."),
            Column("MatchingPrecedence", description="`matchingPrecedence` is used to choose among the FlowSchemas that match a given request."),
            Column("DistinguisherMethod", description="`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema."),
            AGE_COLUMN,
            Column("MissingPL", description="references a broken or non-existent PriorityLevelConfiguration"),
        ]

    def table_row_cells(self, obj: Object) -> list[Any]:
        spec = _spec(obj)
        level = spec.get("priorityLevelConfiguration")
        method = spec.get("distinguisherMethod")
        dangling = next(
            (c.get("status", "") for c in _status(obj).get("conditions") or ()
             if isinstance(c, dict) and c.get("type") == "Dangling"),
            "?",
        )
        return [
            _name(obj),
            (level or {}).get("name", "") if isinstance(level, dict) else "",
            spec.get("matchingPrecedence", 0),
            method.get("type", "") if isinstance(method, dict) else "<none>",
            object_age(obj),
            dangling,
        ]


class PriorityLevelConfigurationStrategy(Strategy):
    def table_columns(self) -> list[Column]:
        return [
            Column("Type", description="`type` indicates whether this priority level is subject to limitation on request execution."),
            Column("NominalConcurrencyShares", description="`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level."),
            Column("Queues", description="`queues` is the number of queues for this priority level."),
            Column("HandSize", description="`handSize` is a small positive number that configures the shuffle sharding of requests into queues."),
            Column("QueueLengthLimit", description="`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time."),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        spec = _spec(obj)
        shares = queues = hand = length = "<none>"
        limited = spec.get("limited")
        if isinstance(limited, dict):
            shares = limited.get("nominalConcurrencyShares", 0)
            queuing = (limited.get("limitResponse") or {}).get("queuing")
            if isinstance(queuing, dict):
                queues = queuing.get("queues", 0)
                hand = queuing.get("handSize", 0)
                length = queuing.get("queueLengthLimit", 0)
        return [spec.get("type", ""), shares, queues, hand, length]


class ValidatingAdmissionPolicyStrategy(Strategy):
    def table_columns(self) -> list[Column]:
        return [
            Column("Validations", type="integer", description="Validations indicates the number of validation rules defined in this configuration"),
            Column("ParamKind", description="ParamKind specifies the kind of resources used to parameterize this policy"),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        spec = _spec(obj)
        param = spec.get("paramKind")
        kind = "<unset>"
        if isinstance(param, dict):
            kind = f"{param.get('apiVersion', '')}/{param.get('kind', '')}"
        return [len(spec.get("validations") or ()), kind]


class ValidatingAdmissionPolicyBindingStrategy(Strategy):
    def table_columns(self) -> list[Column]:
        return [
            Column("PolicyName", description="PolicyName indicates the policy definition which the policy binding binded to"),
            Column("ParamRef", description="ParamRef indicates the param resource which sets the configration param"),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        spec = _spec(obj)
        ref = spec.get("paramRef")
        param = "<unset>"
        if isinstance(ref, dict):
            if ref.get("name"):
                # A reference without a namespace may be cluster-scoped: ``*``.
                param = f"{ref.get('namespace') or '*'}/{ref['name']}"
            elif isinstance(ref.get("selector"), dict):
                param = selector_string(ref["selector"])
        return [spec.get("policyName", ""), param]


class APIServiceStrategy(Strategy):
    """SERVICE (``namespace/name``, or ``Local``) and AVAILABLE (the
    condition, with its reason unless True); AGE is left blank, as kube's
    aggregator leaves it."""

    def table_columns(self) -> list[Column]:
        return [Column("Service"), Column("Available")]

    def table_cells(self, obj: Object) -> list[Any]:
        service = _spec(obj).get("service")
        where = "Local"
        if isinstance(service, dict):
            where = f"{service.get('namespace', '')}/{service.get('name', '')}"
        available = "Unknown"
        for cond in _status(obj).get("conditions") or ():
            if isinstance(cond, dict) and cond.get("type") == "Available":
                available = cond.get("status", "")
                if available != "True":
                    available = f"{available} ({cond.get('reason', '')})"
                break
        return [where, available]

    def table_row_cells(self, obj: Object) -> list[Any]:
        return [_name(obj), *self.table_cells(obj), ""]


class IPAddressStrategy(Strategy):
    """PARENTREF as ``resource.group/namespace/name``; no AGE."""

    def table_definition(self) -> list[Column]:
        return [NAME_COLUMN, Column("ParentRef", description="ParentRef references the resource that an IPAddress is attached to.")]

    def table_row_cells(self, obj: Object) -> list[Any]:
        ref = _spec(obj).get("parentRef")
        parent = "<none>"
        if isinstance(ref, dict):
            group, resource = ref.get("group", ""), ref.get("resource", "")
            parent = (f"{resource}.{group}" if group else resource).lower()
            if ref.get("namespace"):
                parent += "/" + ref["namespace"]
            parent += "/" + ref.get("name", "")
        return [_name(obj), parent]


class ServiceCIDRStrategy(Strategy):
    def table_columns(self) -> list[Column]:
        return [Column("CIDRs", description="CIDRs defines the IP blocks in CIDR notation (e.g. \"192.168.0.0/24\" or \"2001:db8::/64\") from which to assign service cluster IPs.")]

    def table_cells(self, obj: Object) -> list[Any]:
        return [",".join(str(c) for c in _spec(obj).get("cidrs") or ())]


class ResourceClaimStrategy(Strategy):
    def table_columns(self) -> list[Column]:
        return [Column("State", description="A summary of the current state (allocated, pending, reserved, etc.).")]

    def table_cells(self, obj: Object) -> list[Any]:
        deleted = bool((obj.get("metadata") or {}).get("deletionTimestamp"))
        status = _status(obj)
        states = ["deleted"] if deleted else []
        if not status.get("allocation"):
            if not deleted:
                states.append("pending")
        else:
            states.append("allocated")
            if status.get("reservedFor"):
                states.append("reserved")
        return [",".join(states)]


class ResourceSliceStrategy(Strategy):
    def table_columns(self) -> list[Column]:
        return [
            Column("Node", description="NodeName identifies the node which provides the resources in this pool."),
            Column("Driver", description="Driver identifies the DRA driver providing the capacity information."),
            Column("Pool", description="Name is used to identify the pool."),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        spec = _spec(obj)
        pool = spec.get("pool") if isinstance(spec.get("pool"), dict) else {}
        return [spec.get("nodeName") or "", spec.get("driver", ""), pool.get("name", "")]
