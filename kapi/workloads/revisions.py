"""A Deployment's revisions: the pod-template hash, the annotations kube's
deployment controller keeps on ReplicaSets, and the rollout's arithmetic.

After kube's ``pkg/controller/deployment/util/deployment_util.go`` and
``controller.ComputeHash``. The hash is FNV-32a, rendered as kube renders it
(``rand.SafeEncodeString`` of the decimal value); what is hashed is the
template as canonical JSON (kube hashes the Go struct as ``go-spew`` prints
it, which no Python program reproduces), so a hash is stable here and has
kube's form, but is not the value kube computes for the same template.
"""

from __future__ import annotations

import copy
import json
import math
import re
import struct
from typing import Any

from kapi.workloads.api import Object

__all__ = [
    "DESIRED_REPLICAS",
    "HASH_LABEL",
    "MAX_REPLICAS",
    "REVISION",
    "REVISION_HISTORY",
    "equal_ignore_hash",
    "max_surge",
    "max_unavailable",
    "new_rs_annotations",
    "replicas_of",
    "revision",
    "set_replicas_annotations",
    "template_hash",
]

HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
_SKIPPED = {
    "kubectl.kubernetes.io/last-applied-configuration",
    REVISION,
    REVISION_HISTORY,
    DESIRED_REPLICAS,
    MAX_REPLICAS,
    "deprecated.deployment.rollback.to",
}
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
_MAX_HISTORY_CHARS = 2000


def template_hash(template: Any, collision_count: int | None) -> str:
    """The ``pod-template-hash`` of a template (``controller.ComputeHash``)."""
    data = json.dumps(template, sort_keys=True, separators=(",", ":")).encode()
    h = 0x811C9DC5
    for byte in data + (struct.pack("<I", collision_count & 0xFFFFFFFF) if collision_count is not None else b""):
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return "".join(_ALPHANUMS[ord(c) % len(_ALPHANUMS)] for c in str(h))


def _without_hash(template: Any) -> Any:
    t = copy.deepcopy(template) if isinstance(template, dict) else {}
    meta = t.get("metadata")
    if isinstance(meta, dict):
        labels = dict(meta.get("labels") or {})
        labels.pop(HASH_LABEL, None)
        if labels:
            meta["labels"] = labels
        else:
            meta.pop("labels", None)
        for key in [k for k, v in meta.items() if v in (None, {}, [], "")]:
            del meta[key]
        if not meta:
            t.pop("metadata")
    return t


def equal_ignore_hash(a: Any, b: Any) -> bool:
    """Two pod templates equal but for the hash label (``EqualIgnoreHash``)."""
    return _without_hash(a) == _without_hash(b)


def replicas_of(obj: Object) -> int:
    value = (obj.get("spec") or {}).get("replicas")
    return 1 if value is None else int(value)


def revision(rs: Object) -> int:
    value = (rs["metadata"].get("annotations") or {}).get(REVISION)
    try:
        return int(value) if value is not None else 0
    except ValueError:
        return 0


def _scaled(value: Any, total: int, round_up: bool) -> int:
    """``intstr.GetScaledValueFromIntOrPercent``."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    match = re.fullmatch(r"(\d+)%", str(value))
    if not match:
        return 0
    scaled = int(match.group(1)) * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def _fenceposts(d: Object) -> tuple[int, int]:
    rolling = ((d.get("spec") or {}).get("strategy") or {}).get("rollingUpdate") or {}
    desired = replicas_of(d)
    surge = _scaled(rolling.get("maxSurge", 0), desired, True)
    unavailable = _scaled(rolling.get("maxUnavailable", 0), desired, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def rolling(d: Object) -> bool:
    return ((d.get("spec") or {}).get("strategy") or {}).get("type", "RollingUpdate") == "RollingUpdate"


def max_surge(d: Object) -> int:
    return _fenceposts(d)[0] if rolling(d) else 0


def max_unavailable(d: Object) -> int:
    if not rolling(d) or replicas_of(d) == 0:
        return 0
    return min(_fenceposts(d)[1], replicas_of(d))


def set_replicas_annotations(annotations: dict, desired: int, maximum: int) -> bool:
    changed = False
    for key, value in ((DESIRED_REPLICAS, str(desired)), (MAX_REPLICAS, str(maximum))):
        if annotations.get(key) != value:
            annotations[key] = value
            changed = True
    return changed


def new_rs_annotations(d: Object, rs: Object, new_revision: int, exists: bool) -> bool:
    """kube's ``SetNewReplicaSetAnnotations`` on ``rs`` (MUTATES it): the
    Deployment's annotations, the revision and its history, and for a new one
    the replicas annotations. Returns whether anything changed."""
    meta = rs["metadata"]
    annotations = meta.setdefault("annotations", {})
    changed = False
    for key, value in (d["metadata"].get("annotations") or {}).items():
        if key in _SKIPPED or annotations.get(key) == value:
            continue
        annotations[key] = value
        changed = True
    old = annotations.get(REVISION)
    try:
        old_int = int(old) if old is not None else 0
    except ValueError:
        return changed
    if old_int < new_revision:
        annotations[REVISION] = str(new_revision)
        changed = True
        if old is not None:
            history = annotations.get(REVISION_HISTORY, "")
            revisions = history.split(",") if history else []
            total = len(history) + len(old) + 1
            while total > _MAX_HISTORY_CHARS and revisions:
                total -= len(revisions.pop(0)) + 1
            if total <= _MAX_HISTORY_CHARS:
                annotations[REVISION_HISTORY] = ",".join([*revisions, old])
    if not exists and set_replicas_annotations(
        annotations, replicas_of(d), replicas_of(d) + max_surge(d)
    ):
        changed = True
    return changed
