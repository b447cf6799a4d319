"""Recording ``Event`` objects for what the workers do and what fails.

Events are written through the registry like everything else. The name is
derived from the involved object, reason and message, so recording the same
thing again (a retried task, another worker) bumps ``count`` and
``lastTimestamp`` instead of piling up copies: idempotent by construction.
Objects without a namespace get their Events in ``default``, as kube's recorder
does.
"""

from __future__ import annotations

import hashlib
import logging
import socket

from kapi.errors import StatusError
from kapi.lifecycle import FIELD_MANAGER
from kapi.registry.catalog import catalog
from kapi.registry.options import CreateOptions, UpdateOptions
from kapi.registry.store import Registry, now_rfc3339

__all__ = ["GC_COMPONENT", "NAMESPACE_COMPONENT", "record"]

log = logging.getLogger(__name__)

GC_COMPONENT = "garbage-collector-controller"
NAMESPACE_COMPONENT = "namespace-controller"


def record(
    involved_rt,
    involved: dict,
    type_: str,
    reason: str,
    message: str,
    component: str,
    registry: Registry | None = None,
) -> None:
    """Record (or count again) an Event about ``involved``. Never raises."""
    registry = registry or Registry()
    meta = involved.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    digest = hashlib.sha1(f"{meta.get('uid')}|{reason}|{message}".encode()).hexdigest()[
        :16
    ]
    name = f"{meta.get('name', '')[:200]}.{digest}"
    now = now_rfc3339()
    reference = {
        "kind": involved_rt.kind,
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
        "apiVersion": involved_rt.api_version,
        "resourceVersion": meta.get("resourceVersion", ""),
    }
    if meta.get("namespace"):
        reference["namespace"] = meta["namespace"]
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": reference,
        "reason": reason,
        "message": message,
        "source": {"component": component},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "type": type_,
        "eventTime": None,
        "reportingComponent": component,
        "reportingInstance": f"{component}-{socket.gethostname()}",
    }
    rt = catalog().lookup("", "v1", "events")
    try:
        registry.create(
            rt, namespace, event, CreateOptions(field_manager=FIELD_MANAGER)
        )
        return
    except StatusError as exc:
        if exc.code != 409:
            log.info("could not record event %s/%s: %s", namespace, name, exc)
            return

    def again(current: dict) -> dict:
        current["count"] = int(current.get("count") or 1) + 1
        current["lastTimestamp"] = now
        return current

    try:
        registry.update_with(
            rt, namespace, name, again, UpdateOptions(field_manager=FIELD_MANAGER)
        )
    except StatusError as exc:
        log.info("could not update event %s/%s: %s", namespace, name, exc)
