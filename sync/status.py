"""Conditions, status writes and Events for GitRepository and Sync objects.

Status is written through the registry's ``/status`` path as ``kapi-sync``. A
condition keeps its ``lastTransitionTime`` while its status stays the same, so a
reconcile that finds nothing new computes the same status and the registry
writes nothing (no new resourceVersion).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from typing import Any

from kapi import errors
from kapi.registry.catalog import catalog
from kapi.registry.options import CreateOptions, UpdateOptions
from kapi.registry.resource import ResourceType
from kapi.registry.store import Registry, now_rfc3339

__all__ = ["event", "set_condition", "update_status"]

Object = dict[str, Any]
FIELD_MANAGER = "kapi-sync"


def set_condition(status: dict, type_: str, state: str, reason: str, message: str,
                  generation: int | None = None) -> None:
    """Set one condition in ``status`` (MUTATES it), keeping the transition time
    when the condition's status did not change."""
    conditions = status.setdefault("conditions", [])
    old = next((c for c in conditions if c.get("type") == type_), None)
    when = old.get("lastTransitionTime") if old and old.get("status") == state else now_rfc3339()
    new = {"type": type_, "status": state, "reason": reason, "message": message[:4096],
           "lastTransitionTime": when}
    if generation is not None:
        new["observedGeneration"] = generation
    if old is None:
        conditions.append(new)
    else:
        conditions[conditions.index(old)] = new


def remove_condition(status: dict, type_: str) -> None:
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != type_]


def update_status(rt: ResourceType, namespace: str, name: str, change: Callable[[dict], None],
                  registry: Registry | None = None) -> Object | None:
    """Apply ``change(status)`` to the live object's status; None when it is gone."""
    registry = registry or Registry()

    def mutate(obj: Object) -> Object:
        status = copy.deepcopy(obj.get("status") or {})
        change(status)
        obj["status"] = status
        return obj

    try:
        return registry.update_with(
            rt, namespace, name, mutate, UpdateOptions(subresource="status", field_manager=FIELD_MANAGER)
        )
    except errors.StatusError as exc:
        if exc.code == 404:
            return None
        raise


def event(obj: Object, type_: str, reason: str, message: str, registry: Registry | None = None) -> None:
    """Record a core/v1 Event about ``obj`` (best effort: an Event never fails a reconcile)."""
    registry = registry or Registry()
    rt = catalog().lookup("", "v1", "events")
    meta = obj["metadata"]
    now = now_rfc3339()
    body = {
        "apiVersion": "v1",
        "kind": "Event",
        # Named as kube's event recorder names them (a generateName may
        # not end in ".").
        "metadata": {"name": f"{meta['name']}.{time.time_ns():x}", "namespace": meta["namespace"]},
        "involvedObject": {
            "apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": meta["name"],
            "namespace": meta["namespace"], "uid": meta.get("uid", ""),
            "resourceVersion": meta.get("resourceVersion", ""),
        },
        "reason": reason,
        "message": message[:1024],
        "type": type_,
        "source": {"component": "kapi-sync"},
        "reportingComponent": "kapi-sync",
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
    }
    try:
        registry.create(rt, meta["namespace"], body, CreateOptions(field_manager=FIELD_MANAGER))
    except errors.StatusError:
        pass
    from sync.notify import enqueue

    enqueue(obj, type_, reason, message)
