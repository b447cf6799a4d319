"""Protobuf message tables of the policy/v1 API.

Field numbers and types follow k8s.io/api's policy/v1 generated.proto;
JSON names follow the Go json tags. The notation is described in
``kapi.protobuf.schema``.
"""

from __future__ import annotations

from kapi.protobuf.schema import Message

__all__ = ["KINDS", "MESSAGES"]

MESSAGES: dict[str, Message] = {
    "policy.v1.Eviction": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("deleteOptions", "meta.v1.DeleteOptions"),
    },
    "policy.v1.PodDisruptionBudget": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "policy.v1.PodDisruptionBudgetSpec"),
        3: ("status", "policy.v1.PodDisruptionBudgetStatus"),
    },
    "policy.v1.PodDisruptionBudgetList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]policy.v1.PodDisruptionBudget"),
    },
    "policy.v1.PodDisruptionBudgetSpec": {
        1: ("minAvailable", "intstr.IntOrString"),
        2: ("selector", "meta.v1.LabelSelector"),
        3: ("maxUnavailable", "intstr.IntOrString"),
        4: ("unhealthyPodEvictionPolicy", "*string"),
    },
    "policy.v1.PodDisruptionBudgetStatus": {
        1: ("observedGeneration", "int64"),
        2: ("disruptedPods", "map[string]meta.v1.Time"),
        3: ("disruptionsAllowed", "*int32"),
        4: ("currentHealthy", "*int32"),
        5: ("desiredHealthy", "*int32"),
        6: ("expectedPods", "*int32"),
        7: ("conditions", "[]meta.v1.Condition"),
    },
}

# apiVersion -> (message package, kinds registered in it)
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "policy/v1": (
        "policy.v1",
        (
            "Eviction",
            "PodDisruptionBudget",
            "PodDisruptionBudgetList",
        ),
    ),
}
