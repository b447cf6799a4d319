"""Flux's metrics and one log line per reconcile of a Sync or GitRepository.

``observed(kind, read, work)`` runs one reconcile pass and then records what
Flux's controllers record (``fluxcd/pkg/runtime/metrics``):
``gotk_reconcile_duration_seconds``, ``gotk_reconcile_condition`` (one series per
condition status, 1 for the current one) and ``gotk_suspend_status``, and logs
``kapi.reconcile``: kind, namespace, name, revision, Ready reason, duration and
outcome.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from kapi.observability import metrics

__all__ = ["observed"]

log = logging.getLogger("kapi.reconcile")

_STATUSES = ("True", "False", "Unknown", "Deleted")


def observed(kind: str, namespace: str, name: str, read: Callable[[], dict | None],
             work: Callable[[], Any]) -> Any:
    started = time.perf_counter()
    outcome = "error"
    try:
        result = work()
        outcome = "ok"
        return result
    finally:
        duration = time.perf_counter() - started
        metrics.RECONCILE_DURATION.labels(kind, name, namespace).observe(duration)
        try:
            obj = read()
        except Exception:
            obj = None
        status = (obj or {}).get("status") or {}
        ready = next(
            (c for c in status.get("conditions") or [] if c.get("type") == "Ready"), {}
        )
        current = ready.get("status", "Unknown") if obj is not None else "Deleted"
        for value in _STATUSES:
            metrics.RECONCILE_CONDITION.labels(kind, name, namespace, "Ready", value).set(
                1 if value == current else 0
            )
        suspended = bool(((obj or {}).get("spec") or {}).get("suspend"))
        metrics.SUSPEND_STATUS.labels(kind, name, namespace).set(1 if suspended else 0)
        log.info(
            "reconcile",
            extra={
                "fields": {
                    "kind": kind,
                    "namespace": namespace,
                    "name": name,
                    "revision": status.get("lastAppliedRevision")
                    or (status.get("artifact") or {}).get("revision", ""),
                    "ready": current,
                    "reason": ready.get("reason", ""),
                    "inventory": len((status.get("inventory") or {}).get("entries") or []),
                    "duration": round(duration, 6),
                    "outcome": outcome,
                }
            },
        )
