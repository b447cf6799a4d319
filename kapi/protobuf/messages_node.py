"""Protobuf message tables of the node.k8s.io/v1 API.

Field numbers and types follow k8s.io/api's node/v1 generated.proto;
JSON names follow the Go json tags. The notation is described in
``kapi.protobuf.schema``.
"""

from __future__ import annotations

from kapi.protobuf.schema import Message

__all__ = ["KINDS", "MESSAGES"]

MESSAGES: dict[str, Message] = {
    "node.v1.Overhead": {
        1: ("podFixed", "map[string]resource.Quantity"),
    },
    "node.v1.RuntimeClass": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("handler", "*string"),
        3: ("overhead", "node.v1.Overhead"),
        4: ("scheduling", "node.v1.Scheduling"),
    },
    "node.v1.RuntimeClassList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]node.v1.RuntimeClass"),
    },
    "node.v1.Scheduling": {
        1: ("nodeSelector", "map[string]string"),
        2: ("tolerations", "[]core.v1.Toleration"),
    },
}

# apiVersion -> (message package, kinds registered in it)
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "node.k8s.io/v1": (
        "node.v1",
        (
            "RuntimeClass",
            "RuntimeClassList",
        ),
    ),
}
