"""Protobuf message tables of the events.k8s.io/v1 API.

Field numbers and types follow k8s.io/api's events/v1 generated.proto;
JSON names follow the Go json tags. The notation is described in
``kapi.protobuf.schema``.
"""

from __future__ import annotations

from kapi.protobuf.schema import Message

__all__ = ["KINDS", "MESSAGES"]

MESSAGES: dict[str, Message] = {
    "events.v1.Event": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("eventTime", "meta.v1.MicroTime"),
        3: ("series", "events.v1.EventSeries"),
        4: ("reportingController", "string"),
        5: ("reportingInstance", "string"),
        6: ("action", "string"),
        7: ("reason", "string"),
        8: ("regarding", "core.v1.ObjectReference"),
        9: ("related", "core.v1.ObjectReference"),
        10: ("note", "string"),
        11: ("type", "string"),
        12: ("deprecatedSource", "core.v1.EventSource"),
        13: ("deprecatedFirstTimestamp", "meta.v1.Time"),
        14: ("deprecatedLastTimestamp", "meta.v1.Time"),
        15: ("deprecatedCount", "int32"),
    },
    "events.v1.EventList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]events.v1.Event"),
    },
    "events.v1.EventSeries": {
        1: ("count", "*int32"),
        2: ("lastObservedTime", "meta.v1.MicroTime"),
    },
}

# apiVersion -> (message package, kinds registered in it)
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "events.k8s.io/v1": (
        "events.v1",
        (
            "Event",
            "EventList",
        ),
    ),
}
