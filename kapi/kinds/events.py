"""Event, served as core/v1 and events.k8s.io/v1 and stored once, in core/v1 form.

The field renames follow kube's ``pkg/apis/events/v1`` conversion.
"""

from __future__ import annotations

from typing import Any

from kapi.registry.strategy import (
    NAME_COLUMN,
    Column,
    Object,
    Strategy,
    object_age,
    parse_time,
)

__all__ = ["EventStrategy", "EventsV1Strategy"]

# events.k8s.io/v1 name -> core/v1 name
_RENAMES = {
    "regarding": "involvedObject",
    "note": "message",
    "deprecatedSource": "source",
    "deprecatedFirstTimestamp": "firstTimestamp",
    "deprecatedLastTimestamp": "lastTimestamp",
    "deprecatedCount": "count",
    "reportingController": "reportingComponent",
}
_BACK = {v: k for k, v in _RENAMES.items()}


def _rename(obj: Object, names: dict[str, str], api_version: str) -> Object:
    out: dict[str, Any] = {}
    for key, value in obj.items():
        out[names.get(key, key)] = value
    out["apiVersion"] = api_version
    out["kind"] = "Event"
    return out


class EventStrategy(Strategy):
    """core/v1 Event (the stored form)."""

    def table_definition(self) -> list[Column]:
        return [
            Column("Last Seen"),
            Column("Type"),
            Column("Reason"),
            Column("Object"),
            Column("Subobject", priority=1),
            Column("Source", priority=1),
            Column("Message"),
            Column("First Seen", priority=1),
            Column("Count", priority=1),
            {**NAME_COLUMN, "priority": 1},
        ]

    def table_row_cells(self, obj: Object) -> list:
        involved = obj.get("involvedObject") or {}
        source = obj.get("source") or {}
        last = obj.get("lastTimestamp") or obj.get("eventTime")
        first = obj.get("firstTimestamp") or obj.get("eventTime")
        count = obj.get("count") or ((obj.get("series") or {}).get("count")) or 1
        last_seen = _age(last) if parse_time(last) else object_age(obj)
        first_seen = _age(first) if parse_time(first) else object_age(obj)
        if count > 1:
            last_seen = f"{last_seen} (x{count} over {first_seen})"
        source_text = source.get("component", "") or obj.get("reportingComponent", "")
        if source.get("host"):
            source_text += f", {source['host']}"
        return [
            last_seen,
            obj.get("type", ""),
            obj.get("reason", ""),
            f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}",
            involved.get("fieldPath", ""),
            source_text,
            (obj.get("message") or "").strip(),
            first_seen,
            count,
            (obj.get("metadata") or {}).get("name", ""),
        ]


def _age(timestamp: str) -> str:
    return object_age({"metadata": {"creationTimestamp": timestamp}})


class EventsV1Strategy(EventStrategy):
    """events.k8s.io/v1 Event: converted to and from the stored core/v1 form."""

    def to_storage(self, obj: Object, version: str) -> Object:
        return _rename(obj, _RENAMES, "v1")

    def from_storage(self, obj: Object, version: str) -> Object:
        return _rename(obj, _BACK, "events.k8s.io/v1")

    def serves_stored_form(self, version: str) -> bool:
        return False

    def storage_field(self, path: str) -> str:
        head, _, rest = path.partition(".")
        head = _RENAMES.get(head, head)
        return f"{head}.{rest}" if rest else head

    def table_row_cells(self, obj: Object) -> list:
        return super().table_row_cells(_rename(obj, _RENAMES, "v1"))
