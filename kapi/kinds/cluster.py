"""RBAC, autoscaling, storage, policy, scheduling and Node: rules and table columns.

Columns are those kubectl prints against a real cluster; rules are the ones
users hit first (a RoleBinding's ``roleRef`` cannot change, an HPA's
``maxReplicas`` may not be below ``minReplicas``).
"""

from __future__ import annotations

from typing import Any

from kapi.errors import Cause
from kapi.kinds.defaulting import default_string
from kapi.kinds.hpaconversion import (
    default_metrics,
    drop_round_trip_annotations,
)
from kapi.registry.strategy import Column, Object, Strategy

__all__ = [
    "ClusterRoleStrategy",
    "HorizontalPodAutoscalerStrategy",
    "NodeStrategy",
    "PersistentVolumeClaimStrategy",
    "PersistentVolumeStrategy",
    "PodDisruptionBudgetStrategy",
    "PriorityClassStrategy",
    "RoleBindingStrategy",
    "RoleStrategy",
    "StorageClassStrategy",
]

_CREATED_AT = Column(
    "Created At",
    type="date",
    description="CreationTimestamp is a timestamp representing the server time when this object was created.",
)


class RoleStrategy(Strategy):
    """Role and ClusterRole print NAME and CREATED AT (not AGE), as kube does."""

    def table_definition(self) -> list[Column]:
        return [super().table_definition()[0], _CREATED_AT]

    def table_row_cells(self, obj: Object) -> list[Any]:
        meta = obj.get("metadata") or {}
        return [meta.get("name", ""), meta.get("creationTimestamp", "")]


class ClusterRoleStrategy(RoleStrategy):
    pass


class RoleBindingStrategy(Strategy):
    def validate(self, obj: Object) -> list[Cause]:
        causes: list[Cause] = []
        ref = obj.get("roleRef")
        if not isinstance(ref, dict):
            return [Cause("FieldValueRequired", "Required value", "roleRef")]
        kinds = (
            ("Role", "ClusterRole")
            if obj.get("kind") == "RoleBinding"
            else ("ClusterRole",)
        )
        if ref.get("kind") not in kinds:
            supported = ", ".join(f'"{k}"' for k in kinds)
            causes.append(
                Cause(
                    "FieldValueNotSupported",
                    f'Unsupported value: "{ref.get("kind", "")}": supported values: {supported}',
                    "roleRef.kind",
                )
            )
        if not ref.get("name"):
            causes.append(Cause("FieldValueRequired", "Required value", "roleRef.name"))
        if ref.get("apiGroup", "") != "rbac.authorization.k8s.io":
            causes.append(
                Cause(
                    "FieldValueNotSupported",
                    f'Unsupported value: "{ref.get("apiGroup", "")}": supported values: "rbac.authorization.k8s.io"',
                    "roleRef.apiGroup",
                )
            )
        for i, subject in enumerate(obj.get("subjects") or ()):
            kind = subject.get("kind")
            if kind not in ("ServiceAccount", "User", "Group"):
                causes.append(
                    Cause(
                        "FieldValueNotSupported",
                        f'Unsupported value: "{kind or ""}": supported values: "ServiceAccount", "User", "Group"',
                        f"subjects[{i}].kind",
                    )
                )
            if not subject.get("name"):
                causes.append(
                    Cause("FieldValueRequired", "Required value", f"subjects[{i}].name")
                )
        return causes

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        causes = self.validate(obj)
        if old.get("roleRef") and obj.get("roleRef") != old.get("roleRef"):
            ref = obj.get("roleRef") or {}
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f'Invalid value: rbac.RoleRef{{APIGroup:"{ref.get("apiGroup", "")}", Kind:"{ref.get("kind", "")}", Name:"{ref.get("name", "")}"}}: cannot change roleRef',
                    "roleRef",
                )
            )
        return causes

    def table_columns(self) -> list[Column]:
        return [
            Column(
                "Role",
                description="RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace.",
            )
        ]

    def table_definition(self) -> list[Column]:
        return [
            *super().table_definition(),
            Column("Users", priority=1, description="Users in the binding"),
            Column("Groups", priority=1, description="Groups in the binding"),
            Column(
                "ServiceAccounts",
                priority=1,
                description="ServiceAccounts in the binding",
            ),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        ref = obj.get("roleRef") or {}
        return [f"{ref.get('kind', '')}/{ref.get('name', '')}"]

    def table_row_cells(self, obj: Object) -> list[Any]:
        subjects = obj.get("subjects") or []
        users = [s.get("name", "") for s in subjects if s.get("kind") == "User"]
        groups = [s.get("name", "") for s in subjects if s.get("kind") == "Group"]
        sas = [
            f"{s.get('namespace', '')}/{s.get('name', '')}"
            for s in subjects
            if s.get("kind") == "ServiceAccount"
        ]
        return [
            *super().table_row_cells(obj),
            ", ".join(users),
            ", ".join(groups),
            ", ".join(sas),
        ]


def _default(obj: Object) -> None:
    """kube's autoscaling/v2 defaults: minReplicas 1, and no metrics means cpu at 80%."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        spec.setdefault("minReplicas", 1)
        default_metrics(spec)


class HorizontalPodAutoscalerStrategy(Strategy):
    status_subresource = True

    def prepare_for_create(self, obj: Object) -> None:
        obj.pop("status", None)
        drop_round_trip_annotations(obj)
        _default(obj)

    def prepare_for_update(self, obj: Object, old: Object) -> None:
        super().prepare_for_update(obj, old)
        drop_round_trip_annotations(obj)
        _default(obj)

    def validate(self, obj: Object) -> list[Cause]:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return [Cause("FieldValueRequired", "Required value", "spec")]
        causes: list[Cause] = []
        ref = spec.get("scaleTargetRef") or {}
        if not ref.get("kind"):
            causes.append(
                Cause(
                    "FieldValueRequired", "Required value", "spec.scaleTargetRef.kind"
                )
            )
        if not ref.get("name"):
            causes.append(
                Cause(
                    "FieldValueRequired", "Required value", "spec.scaleTargetRef.name"
                )
            )
        low, high = spec.get("minReplicas", 1), spec.get("maxReplicas")
        if isinstance(low, int) and low < 1:
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f"Invalid value: {low}: must be greater than or equal to 1",
                    "spec.minReplicas",
                )
            )
        if not isinstance(high, int) or high < 1:
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f"Invalid value: {high}: must be greater than 0",
                    "spec.maxReplicas",
                )
            )
        elif isinstance(low, int) and high < low:
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f"Invalid value: {high}: must be greater than or equal to `minReplicas`",
                    "spec.maxReplicas",
                )
            )
        return causes

    def table_columns(self) -> list[Column]:
        return [
            Column(
                "Reference",
                description="scaleTargetRef points to the target resource to scale",
            ),
            Column(
                "Targets",
                description="metrics contains the specifications for which to use to calculate the desired replica count",
            ),
            Column(
                "MinPods",
                type="integer",
                description="minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.",
            ),
            Column(
                "MaxPods",
                type="integer",
                description="maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up.",
            ),
            Column(
                "Replicas",
                type="integer",
                description="currentReplicas is current number of replicas of pods managed by this autoscaler",
            ),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        spec = obj.get("spec") or {}
        ref = spec.get("scaleTargetRef") or {}
        targets = []
        for metric in spec.get("metrics") or ():
            if metric.get("type") == "Resource":
                res = metric.get("resource") or {}
                target = res.get("target") or {}
                if "averageUtilization" in target:
                    targets.append(
                        f"{res.get('name')}: <unknown>/{target['averageUtilization']}%"
                    )
                else:
                    targets.append(
                        f"{res.get('name')}: <unknown>/{target.get('averageValue') or target.get('value')}"
                    )
            else:
                targets.append("<unknown>")
        shown = ", ".join(targets[:2]) + (
            f" + {len(targets) - 2} more..." if len(targets) > 2 else ""
        )
        return [
            f"{ref.get('kind', '')}/{ref.get('name', '')}",
            shown or "<none>",
            spec.get("minReplicas", 1),
            spec.get("maxReplicas", 0),
            (obj.get("status") or {}).get("currentReplicas", 0),
        ]


class PersistentVolumeClaimStrategy(Strategy):
    status_subresource = True

    def prepare_for_create(self, obj: Object) -> None:
        obj["status"] = {"phase": "Pending"}
        spec = obj.get("spec")
        if isinstance(spec, dict):
            spec.setdefault("volumeMode", "Filesystem")

    def validate(self, obj: Object) -> list[Cause]:
        spec = obj.get("spec") or {}
        causes: list[Cause] = []
        if not spec.get("accessModes"):
            causes.append(
                Cause(
                    "FieldValueRequired",
                    "Required value: at least 1 access mode is required",
                    "spec.accessModes",
                )
            )
        if not ((spec.get("resources") or {}).get("requests") or {}).get(
            "storage"
        ) and not spec.get("volumeName"):
            causes.append(
                Cause("FieldValueRequired", "Required value", "spec.resources[storage]")
            )
        return causes

    def table_columns(self) -> list[Column]:
        return [
            Column(
                "Status",
                description="phase represents the current phase of PersistentVolumeClaim.",
            ),
            Column(
                "Volume",
                description="volumeName is the binding reference to the PersistentVolume backing this claim.",
            ),
            Column(
                "Capacity",
                description="capacity represents the actual resources of the underlying volume.",
            ),
            Column(
                "Access Modes",
                description="accessModes contains the desired access modes the volume should have.",
            ),
            Column(
                "StorageClass",
                description="storageClassName is the name of the StorageClass required by the claim.",
            ),
            Column(
                "VolumeAttributesClass",
                description="volumeAttributesClassName may be used to set the VolumeAttributesClass used by this claim.",
            ),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        return [
            status.get("phase", "Pending"),
            spec.get("volumeName", ""),
            (status.get("capacity") or {}).get("storage", ""),
            _access_modes(status.get("accessModes") or []),
            spec.get("storageClassName") or "<unset>",
            spec.get("volumeAttributesClassName") or "<unset>",
        ]


def _access_modes(modes: list[str]) -> str:
    short = {
        "ReadWriteOnce": "RWO",
        "ReadOnlyMany": "ROX",
        "ReadWriteMany": "RWX",
        "ReadWriteOncePod": "RWOP",
    }
    return ",".join(short.get(m, m) for m in modes)


class PersistentVolumeStrategy(Strategy):
    status_subresource = True

    def prepare_for_create(self, obj: Object) -> None:
        obj["status"] = {"phase": "Pending"}
        spec = obj.get("spec")
        if isinstance(spec, dict):
            default_string(spec, "persistentVolumeReclaimPolicy", "Retain")
            spec.setdefault("volumeMode", "Filesystem")

    def table_columns(self) -> list[Column]:
        return [
            Column(
                "Capacity",
                description="capacity is the description of the persistent volume's resources and capacity.",
            ),
            Column(
                "Access Modes",
                description="accessModes contains all ways the volume can be mounted.",
            ),
            Column(
                "Reclaim Policy",
                description="persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim.",
            ),
            Column(
                "Status",
                description="phase indicates if a volume is available, bound to a claim, or released by a claim.",
            ),
            Column(
                "Claim",
                description="claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.",
            ),
            Column(
                "StorageClass",
                description="storageClassName is the name of StorageClass to which this persistent volume belongs.",
            ),
            Column(
                "VolumeAttributesClass",
                description="Name of VolumeAttributesClass to which this persistent volume belongs.",
            ),
            Column(
                "Reason",
                description="reason is a brief CamelCase string that describes any failure.",
            ),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        claim = spec.get("claimRef")
        return [
            (spec.get("capacity") or {}).get("storage", ""),
            _access_modes(spec.get("accessModes") or []),
            spec.get("persistentVolumeReclaimPolicy", "Retain"),
            status.get("phase", "Pending"),
            f"{claim.get('namespace')}/{claim.get('name')}" if claim else "",
            spec.get("storageClassName", ""),
            spec.get("volumeAttributesClassName") or "<unset>",
            status.get("reason", ""),
        ]


class StorageClassStrategy(Strategy):
    def prepare_for_create(self, obj: Object) -> None:
        obj.setdefault("reclaimPolicy", "Delete")
        obj.setdefault("volumeBindingMode", "Immediate")

    def validate(self, obj: Object) -> list[Cause]:
        return (
            []
            if obj.get("provisioner")
            else [Cause("FieldValueRequired", "Required value", "provisioner")]
        )

    def table_definition(self) -> list[Column]:
        base = super().table_definition()
        return [
            base[0],
            Column(
                "Provisioner",
                description="provisioner indicates the type of the provisioner.",
            ),
            Column(
                "ReclaimPolicy",
                description="reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class.",
            ),
            Column(
                "VolumeBindingMode",
                description="volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.",
            ),
            Column(
                "AllowVolumeExpansion",
                description="allowVolumeExpansion shows whether the storage class allow volume expand.",
            ),
            base[-1],
        ]

    def table_row_cells(self, obj: Object) -> list[Any]:
        cells = super().table_row_cells(obj)
        meta = obj.get("metadata") or {}
        name = cells[0]
        if (meta.get("annotations") or {}).get(
            "storageclass.kubernetes.io/is-default-class"
        ) == "true":
            name += " (default)"
        return [
            name,
            obj.get("provisioner", ""),
            obj.get("reclaimPolicy", "Delete"),
            obj.get("volumeBindingMode", "Immediate"),
            bool(obj.get("allowVolumeExpansion", False)),
            cells[-1],
        ]


class PodDisruptionBudgetStrategy(Strategy):
    status_subresource = True

    def validate(self, obj: Object) -> list[Cause]:
        spec = obj.get("spec") or {}
        if "minAvailable" in spec and "maxUnavailable" in spec:
            return [
                Cause(
                    "FieldValueInvalid",
                    'Invalid value: "object": minAvailable and maxUnavailable cannot be both set',
                    "spec",
                )
            ]
        return []

    def table_columns(self) -> list[Column]:
        return [
            Column(
                "Min Available",
                description='An eviction is allowed if at least "minAvailable" pods selected by "selector" will still be available after the eviction.',
            ),
            Column(
                "Max Unavailable",
                description='An eviction is allowed if at most "maxUnavailable" pods selected by "selector" are unavailable after the eviction.',
            ),
            Column(
                "Allowed Disruptions",
                type="integer",
                description="Number of pod disruptions that are currently allowed.",
            ),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        spec = obj.get("spec") or {}
        return [
            str(spec.get("minAvailable", "N/A")),
            str(spec.get("maxUnavailable", "N/A")),
            (obj.get("status") or {}).get("disruptionsAllowed", 0),
        ]


class PriorityClassStrategy(Strategy):
    def table_columns(self) -> list[Column]:
        return [
            Column(
                "Value",
                type="integer",
                description="value represents the integer value of this priority class.",
            ),
            Column(
                "Global-Default",
                type="boolean",
                description="globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class.",
            ),
        ]

    def table_definition(self) -> list[Column]:
        return [
            *super().table_definition(),
            Column(
                "PreemptionPolicy",
                description="preemptionPolicy is the Policy for preempting pods with lower priority.",
            ),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        return [obj.get("value", 0), bool(obj.get("globalDefault", False))]

    def table_row_cells(self, obj: Object) -> list[Any]:
        return [
            *super().table_row_cells(obj),
            obj.get("preemptionPolicy", "PreemptLowerPriority"),
        ]


class NodeStrategy(Strategy):
    status_subresource = True

    def table_columns(self) -> list[Column]:
        return [
            Column("Status", description="The status of the node"),
            Column("Roles", description="The roles of the node"),
        ]

    def table_definition(self) -> list[Column]:
        return [
            *super().table_definition(),
            Column("Version", description="Kubelet Version reported by the node."),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        conditions = {
            c.get("type"): c.get("status")
            for c in (obj.get("status") or {}).get("conditions") or ()
        }
        state = {"True": "Ready", "False": "NotReady"}.get(
            conditions.get("Ready"), "Unknown"
        )
        labels = (obj.get("metadata") or {}).get("labels") or {}
        roles = sorted(
            k.split("/", 1)[1]
            for k in labels
            if k.startswith("node-role.kubernetes.io/")
        )
        return [state, ",".join(roles) or "<none>"]

    def table_row_cells(self, obj: Object) -> list[Any]:
        info = (obj.get("status") or {}).get("nodeInfo") or {}
        return [*super().table_row_cells(obj), info.get("kubeletVersion", "")]
