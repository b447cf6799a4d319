"""Protobuf message tables of the scheduling.k8s.io/v1 API.

Field numbers and types follow k8s.io/api's scheduling/v1 generated.proto, plus
the scheduling/v1alpha3 messages that batch/v1 Job embeds (no v1alpha3 kinds);
JSON names follow the Go json tags. The notation is described in
``kapi.protobuf.schema``.
"""

from __future__ import annotations

from kapi.protobuf.schema import Message

__all__ = ["KINDS", "MESSAGES"]

MESSAGES: dict[str, Message] = {
    "scheduling.v1.PriorityClass": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("value", "*int32"),
        3: ("globalDefault", "bool"),
        4: ("description", "string"),
        5: ("preemptionPolicy", "*string"),
    },
    "scheduling.v1.PriorityClassList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]scheduling.v1.PriorityClass"),
    },
    "scheduling.v1alpha3.TopologyConstraint": {
        1: ("key", "*string"),
    },
    "scheduling.v1alpha3.WorkloadPodGroupAllDisruptionMode": {},
    "scheduling.v1alpha3.WorkloadPodGroupBasicSchedulingPolicy": {},
    "scheduling.v1alpha3.WorkloadPodGroupDisruptionMode": {
        1: ("single", "scheduling.v1alpha3.WorkloadPodGroupSingleDisruptionMode"),
        2: ("all", "scheduling.v1alpha3.WorkloadPodGroupAllDisruptionMode"),
    },
    "scheduling.v1alpha3.WorkloadPodGroupGangSchedulingPolicy": {
        1: ("minCount", "*int32"),
    },
    "scheduling.v1alpha3.WorkloadPodGroupResourceClaim": {
        1: ("name", "*string"),
        2: ("resourceClaimName", "*string"),
        3: ("resourceClaimTemplateName", "*string"),
    },
    "scheduling.v1alpha3.WorkloadPodGroupSchedulingConstraints": {
        1: ("topology", "[]scheduling.v1alpha3.TopologyConstraint"),
    },
    "scheduling.v1alpha3.WorkloadPodGroupSchedulingPolicy": {
        1: ("basic", "scheduling.v1alpha3.WorkloadPodGroupBasicSchedulingPolicy"),
        2: ("gang", "scheduling.v1alpha3.WorkloadPodGroupGangSchedulingPolicy"),
    },
    "scheduling.v1alpha3.WorkloadPodGroupSingleDisruptionMode": {},
}

# apiVersion -> (message package, kinds registered in it)
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "scheduling.k8s.io/v1": (
        "scheduling.v1",
        (
            "PriorityClass",
            "PriorityClassList",
        ),
    ),
}
