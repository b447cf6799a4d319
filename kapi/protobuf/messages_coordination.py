"""Protobuf message tables of the coordination.k8s.io/v1 API.

Field numbers and types follow k8s.io/api's coordination/v1 generated.proto;
JSON names follow the Go json tags. The notation is described in
``kapi.protobuf.schema``.
"""

from __future__ import annotations

from kapi.protobuf.schema import Message

__all__ = ["KINDS", "MESSAGES"]

MESSAGES: dict[str, Message] = {
    "coordination.v1.Lease": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "coordination.v1.LeaseSpec"),
    },
    "coordination.v1.LeaseList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]coordination.v1.Lease"),
    },
    "coordination.v1.LeaseSpec": {
        1: ("holderIdentity", "*string"),
        2: ("leaseDurationSeconds", "*int32"),
        3: ("acquireTime", "meta.v1.MicroTime"),
        4: ("renewTime", "meta.v1.MicroTime"),
        5: ("leaseTransitions", "*int32"),
        6: ("strategy", "*string"),
        7: ("preferredHolder", "*string"),
    },
}

# apiVersion -> (message package, kinds registered in it)
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "coordination.k8s.io/v1": (
        "coordination.v1",
        (
            "Lease",
            "LeaseList",
        ),
    ),
}
