"""Pods as the workload controllers see them: made from a template, active,
ready, available, and which to delete first.

After kube's ``pkg/controller/controller_utils.go`` (``GetPodFromTemplate``,
``FilterActivePods``, ``ActivePods`` ranking) and ``pkg/api/v1/pod``
(``IsPodReady``, ``IsPodAvailable``).
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta

from kapi.workloads import api
from kapi.workloads.ownership import controller_ref

__all__ = ["active", "available", "from_template", "rank_for_deletion", "ready"]

Object = api.Object


def from_template(template: dict, owner: Object, name_prefix: str | None = None) -> Object:
    """A Pod of ``template`` controlled by ``owner``, named ``<owner>-<5 random>``."""
    template = template if isinstance(template, dict) else {}
    tmeta = template.get("metadata") or {}
    meta: dict = {"generateName": f"{name_prefix or owner['metadata']['name']}-"}
    for key in ("labels", "annotations", "finalizers"):
        if tmeta.get(key):
            meta[key] = copy.deepcopy(tmeta[key])
    meta["ownerReferences"] = [controller_ref(owner)]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": copy.deepcopy(template.get("spec") or {}),
    }


def active(pod: Object) -> bool:
    """Not finished and not being deleted (``IsPodActive``)."""
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and "deletionTimestamp" not in pod["metadata"]


def _ready_condition(pod: Object) -> dict | None:
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if isinstance(cond, dict) and cond.get("type") == "Ready":
            return cond
    return None


def ready(pod: Object) -> bool:
    cond = _ready_condition(pod)
    return bool(cond and cond.get("status") == "True")


def available(pod: Object, min_ready_seconds: int, now: datetime | None = None) -> bool:
    """Ready for at least ``min_ready_seconds``."""
    cond = _ready_condition(pod)
    if not cond or cond.get("status") != "True":
        return False
    if not min_ready_seconds:
        return True
    since = api.parse_time(cond.get("lastTransitionTime"))
    now = now or datetime.now(UTC)
    return since is not None and since + timedelta(seconds=min_ready_seconds) <= now


def rank_for_deletion(pods: list[Object]) -> list[Object]:
    """Which to delete first (kube's ``ActivePodsWithRanks``, shortened):
    unscheduled before scheduled, pending before running, not ready before
    ready, then the newest first."""
    phases = {"Pending": 0, "Unknown": 1, "Running": 2}

    def key(pod: Object):
        spec, status = pod.get("spec") or {}, pod.get("status") or {}
        created = pod["metadata"].get("creationTimestamp") or ""
        return (
            bool(spec.get("nodeName")),
            phases.get(status.get("phase"), 0),
            ready(pod),
            _Reverse(created),
        )

    return sorted(pods, key=key)


class _Reverse:
    """Orders strings newest (largest) first."""

    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __lt__(self, other: _Reverse) -> bool:
        return self.value > other.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Reverse) and self.value == other.value
