"""Protobuf message tables of the discovery.k8s.io/v1 API.

Field numbers and types follow k8s.io/api's discovery/v1 generated.proto;
JSON names follow the Go json tags. The notation is described in
``kapi.protobuf.schema``.
"""

from __future__ import annotations

from kapi.protobuf.schema import Message

__all__ = ["KINDS", "MESSAGES"]

MESSAGES: dict[str, Message] = {
    "discovery.v1.Endpoint": {
        1: ("addresses", "[]string"),
        2: ("conditions", "discovery.v1.EndpointConditions"),
        3: ("hostname", "*string"),
        4: ("targetRef", "core.v1.ObjectReference"),
        5: ("deprecatedTopology", "map[string]string"),
        6: ("nodeName", "*string"),
        7: ("zone", "*string"),
        8: ("hints", "discovery.v1.EndpointHints"),
    },
    "discovery.v1.EndpointConditions": {
        1: ("ready", "*bool"),
        2: ("serving", "*bool"),
        3: ("terminating", "*bool"),
    },
    "discovery.v1.EndpointHints": {
        1: ("forZones", "[]discovery.v1.ForZone"),
        2: ("forNodes", "[]discovery.v1.ForNode"),
    },
    "discovery.v1.EndpointPort": {
        1: ("name", "*string"),
        2: ("protocol", "*string"),
        3: ("port", "*int32"),
        4: ("appProtocol", "*string"),
    },
    "discovery.v1.EndpointSlice": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("endpoints", "[]discovery.v1.Endpoint"),
        3: ("ports", "[]discovery.v1.EndpointPort"),
        4: ("addressType", "*string"),
    },
    "discovery.v1.EndpointSliceList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]discovery.v1.EndpointSlice"),
    },
    "discovery.v1.ForNode": {
        1: ("name", "*string"),
    },
    "discovery.v1.ForZone": {
        1: ("name", "*string"),
    },
}

# apiVersion -> (message package, kinds registered in it)
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "discovery.k8s.io/v1": (
        "discovery.v1",
        (
            "EndpointSlice",
            "EndpointSliceList",
        ),
    ),
}
