"""``FieldManager``: the chain of links, and managedFields in and out of objects.

The chain, outermost first (kube's ``NewDefaultFieldManager``)::

    LastAppliedUpdater → LastAppliedManager → BuildManagerInfoManager
      → CapManagersManager → ManagedFieldsUpdater → StripMetaManager
      → StructuredMergeManager

This facade decodes ``metadata.managedFields`` from the live (or new) object,
runs the chain on objects without them, and encodes the result back. A result
that differs from the live object only in managedFields timestamps keeps the
live ones, so an unchanged write stays a no-op (kube's
``IgnoreManagedFieldsTimestampsTransformer``).
"""

from __future__ import annotations

from typing import Any

from kapi import errors
from kapi.fieldmanager.buildmanagerinfo import BuildManagerInfoManager
from kapi.fieldmanager.capmanagers import CapManagersManager
from kapi.fieldmanager.conflicts import ApplyConflicts, conflict_error
from kapi.fieldmanager.interface import Object
from kapi.fieldmanager.lastappliedmanager import LastAppliedManager
from kapi.fieldmanager.lastappliedupdater import LastAppliedUpdater
from kapi.fieldmanager.managed import (
    InvalidManagedFields,
    Managed,
    decode_managed_fields,
    encode_managed_fields,
    is_reset,
)
from kapi.fieldmanager.managedfieldsupdater import ManagedFieldsUpdater
from kapi.fieldmanager.stripmeta import StripMetaManager
from kapi.fieldmanager.structured import StructuredMergeManager
from kapi.objcopy import deep_copy
from kapi.schema import TypeSchema

__all__ = ["FieldManager", "manager_or_user_agent"]

_MAX_MANAGER = 128


def manager_or_user_agent(manager: str, user_agent: str) -> str:
    """kube's ``managerOrUserAgent``: the fieldManager, else the User-Agent up to
    its first ``/`` (``kubectl/v1.37.1 (linux/amd64)`` → ``kubectl``)."""
    if manager:
        return manager
    return user_agent.split("/", 1)[0][:_MAX_MANAGER]


def _without_managed(obj: Object) -> Object:
    out = dict(obj)
    meta = dict(out.get("metadata") or {})
    meta.pop("managedFields", None)
    out["metadata"] = meta
    return out


def _decode(entries: Any) -> Managed:
    try:
        return decode_managed_fields(entries)
    except InvalidManagedFields:
        return Managed()


def _set_managed(obj: Object, managed: Managed) -> Object:
    entries = encode_managed_fields(managed)
    meta = obj.setdefault("metadata", {})
    if entries:
        meta["managedFields"] = entries
    else:
        meta.pop("managedFields", None)
    return obj


def _without_times(entries: Any) -> Any:
    if not isinstance(entries, list):
        return entries
    return [
        {k: v for k, v in e.items() if k != "time"} if isinstance(e, dict) else e
        for e in entries
    ]


def _keep_live_times(live: Object, new: Object) -> Object:
    live_meta = live.get("metadata") or {}
    new_meta = new.get("metadata") or {}
    if "managedFields" not in live_meta or "managedFields" not in new_meta:
        return new
    if _without_times(live_meta["managedFields"]) != _without_times(
        new_meta["managedFields"]
    ):
        return new
    if _without_managed(live) != _without_managed(new):
        return new
    new_meta["managedFields"] = deep_copy(live_meta["managedFields"])
    return new


class FieldManager:
    """Field management for one resource type (and subresource)."""

    def __init__(
        self,
        schema: TypeSchema | None,
        api_version: str,
        subresource: str = "",
        reset_fields: frozenset[str] = frozenset(),
    ) -> None:
        self.subresource = subresource
        inner = StripMetaManager(
            StructuredMergeManager(schema, api_version, reset_fields)
        )
        inner = CapManagersManager(ManagedFieldsUpdater(inner))
        inner = BuildManagerInfoManager(inner, api_version, subresource)
        self.chain = LastAppliedUpdater(LastAppliedManager(inner, schema))

    def update(self, live: Object | None, new: Object, manager: str) -> Object:
        """``new`` with its managedFields for a create (``live`` None) or update
        by ``manager``. Mutates and returns ``new``."""
        live = live or {}
        live_entries = (live.get("metadata") or {}).get("managedFields")
        new_entries = (new.get("metadata") or {}).get("managedFields")
        if self.subresource:
            managed = _decode(live_entries)
        elif is_reset(new_entries):
            managed = Managed()
        else:
            managed = _decode(new_entries)
            if not managed.fields:
                managed = _decode(live_entries)
        # Update links never change the object itself, only ownership: keep
        # ``new`` (and its metadata dict, which callers hold) and set the entries.
        _, managed = self.chain.update(
            _without_managed(live), _without_managed(new), managed, manager
        )
        _set_managed(new, managed)
        return _keep_live_times(live, new) if live else new

    def apply(
        self, live: Object | None, config: Object, manager: str, force: bool
    ) -> Object:
        """The live object with ``config`` applied by ``manager``; raises the 409
        StatusError on conflicts."""
        if not isinstance(config, dict):
            raise errors.bad_request("the applied configuration must be an object")
        if (config.get("metadata") or {}).get("managedFields") is not None:
            raise errors.bad_request("metadata.managedFields must be nil")
        live = live or {}
        managed = _decode((live.get("metadata") or {}).get("managedFields"))
        base = _without_managed(live) if live else {}
        try:
            obj, managed = self.chain.apply(base, config, managed, manager, force)
        except ApplyConflicts as exc:
            raise conflict_error(exc) from None
        out = deep_copy(obj if obj is not None else base)
        _set_managed(out, managed)
        return _keep_live_times(live, out) if live else out
