"""Managed fields as data: decoded entries, their identifiers, and encoding back.

``Managed`` maps a manager *identifier* (kube's ``BuildManagerIdentifier``: the
entry as JSON without time and fields, and without apiVersion for appliers) to
the ``VersionedSet`` it owns, plus the time of each manager's last change.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any

from kapi.fieldmanager.fieldpath import FieldSet, from_fields_v1, to_fields_v1

__all__ = [
    "Managed",
    "VersionedSet",
    "decode_managed_fields",
    "encode_managed_fields",
    "is_reset",
    "manager_identifier",
    "parse_identifier",
]


@dataclass
class VersionedSet:
    fields: FieldSet
    api_version: str
    applied: bool


@dataclass
class Managed:
    fields: dict[str, VersionedSet] = field(default_factory=dict)
    times: dict[str, str | None] = field(default_factory=dict)

    def copy(self) -> Managed:
        return Managed(
            {
                k: VersionedSet(set(v.fields), v.api_version, v.applied)
                for k, v in self.fields.items()
            },
            dict(self.times),
        )


# Both below are pure and run for every entry of every write (decoding,
# encoding, capping); the managers of a server are few: cached.
@functools.lru_cache(maxsize=1024)
def manager_identifier(
    manager: str, operation: str, api_version: str, subresource: str = ""
) -> str:
    entry: dict[str, str] = {"manager": manager, "operation": operation}
    if operation != "Apply" and api_version:
        entry["apiVersion"] = api_version
    if subresource:
        entry["subresource"] = subresource
    return json.dumps(entry, separators=(",", ":"))


def parse_identifier(identifier: str) -> dict[str, str]:
    return dict(_parsed_identifier(identifier))


@functools.lru_cache(maxsize=1024)
def _parsed_identifier(identifier: str) -> tuple[tuple[str, Any], ...]:
    try:
        out = json.loads(identifier)
    except ValueError:
        return (("manager", identifier),)
    return tuple(out.items()) if isinstance(out, dict) else (("manager", identifier),)


def is_reset(entries: Any) -> bool:
    """``managedFields: [{}]`` through a non-apply write clears them."""
    return isinstance(entries, list) and len(entries) == 1 and entries[0] == {}


class InvalidManagedFields(ValueError):
    pass


def decode_managed_fields(entries: Any) -> Managed:
    """Raises ``InvalidManagedFields`` for entries kube could not decode."""
    managed = Managed()
    if not entries:
        return managed
    if not isinstance(entries, list):
        raise InvalidManagedFields("managedFields must be a list")
    for entry in entries:
        if not isinstance(entry, dict) or entry.get("operation") not in (
            "Apply",
            "Update",
        ):
            raise InvalidManagedFields(f"invalid managedFields entry: {entry!r}")
        if entry.get("fieldsType", "FieldsV1") != "FieldsV1":
            raise InvalidManagedFields(
                f"unsupported fieldsType {entry.get('fieldsType')!r}"
            )
        identifier = manager_identifier(
            entry.get("manager", ""),
            entry["operation"],
            entry.get("apiVersion", ""),
            entry.get("subresource", ""),
        )
        fields = from_fields_v1(entry.get("fieldsV1") or {})
        if identifier in managed.fields:
            fields |= managed.fields[identifier].fields
        managed.fields[identifier] = VersionedSet(
            fields, entry.get("apiVersion", ""), entry["operation"] == "Apply"
        )
        managed.times[identifier] = entry.get("time")
    return managed


def encode_managed_fields(managed: Managed) -> list[dict]:
    """Entries sorted as kube sorts them: operation, time, manager, apiVersion, subresource."""
    entries = []
    for identifier, versioned in managed.fields.items():
        if not versioned.fields:
            continue
        info = parse_identifier(identifier)
        entry: dict[str, Any] = {"manager": info.get("manager", "")}
        entry["operation"] = info.get(
            "operation", "Apply" if versioned.applied else "Update"
        )
        entry["apiVersion"] = versioned.api_version
        time = managed.times.get(identifier)
        if time:
            entry["time"] = time
        entry["fieldsType"] = "FieldsV1"
        entry["fieldsV1"] = to_fields_v1(versioned.fields)
        if info.get("subresource"):
            entry["subresource"] = info["subresource"]
        entries.append(entry)
    entries.sort(
        key=lambda e: (
            e["operation"],
            e.get("time") or "",
            e["manager"],
            e["apiVersion"],
            e.get("subresource", ""),
        )
    )
    return entries
