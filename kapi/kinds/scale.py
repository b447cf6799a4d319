"""The ``/scale`` subresource: an ``autoscaling/v1`` Scale read from and written to
the scaled object through three JSON paths (kube's ``CustomResourceSubresourceScale``;
built-in workloads use the same paths with a selector taken from ``spec.selector``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ScalePaths", "apply_scale", "selector_string", "to_scale"]

Object = dict[str, Any]


@dataclass(frozen=True)
class ScalePaths:
    spec_replicas: str = ".spec.replicas"
    status_replicas: str = ".status.replicas"
    #: A path to a serialized selector string (CRDs), or None for workloads whose
    #: ``spec.selector`` is a LabelSelector.
    label_selector: str | None = None
    default_replicas: int = 0


def _parts(path: str) -> list[str]:
    return [p for p in path.strip().lstrip(".").split(".") if p]


def _get(obj: Any, path: str) -> Any:
    for part in _parts(path):
        if not isinstance(obj, dict):
            return None
        obj = obj.get(part)
    return obj


def selector_string(selector: Any) -> str:
    """A LabelSelector as ``a=b,c in (d,e)``, the way Scale.status.selector shows it."""
    if not isinstance(selector, dict):
        return ""
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or ():
        key, op, values = (
            expr.get("key", ""),
            expr.get("operator", ""),
            expr.get("values") or [],
        )
        if op == "In":
            parts.append(f"{key} in ({','.join(sorted(values))})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(sorted(values))})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)


def to_scale(obj: Object, paths: ScalePaths) -> Object:
    """The Scale for ``obj``. Does not mutate ``obj``."""
    meta = obj.get("metadata") or {}
    replicas = _get(obj, paths.spec_replicas)
    status_replicas = _get(obj, paths.status_replicas)
    if paths.label_selector is None:
        selector = selector_string((obj.get("spec") or {}).get("selector"))
    else:
        selector = _get(obj, paths.label_selector)
    status: dict[str, Any] = {
        "replicas": status_replicas if isinstance(status_replicas, int) else 0
    }
    if selector:
        status["selector"] = selector
    desired = replicas if isinstance(replicas, int) else paths.default_replicas
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in (
                "name",
                "namespace",
                "uid",
                "resourceVersion",
                "creationTimestamp",
            )
            if k in meta
        },
        # autoscaling/v1 ScaleSpec.replicas is ``omitempty``: a Scale of 0
        # replicas has an empty spec (status.replicas is not, and stays).
        "spec": {"replicas": desired} if desired else {},
        "status": status,
    }


def apply_scale(obj: Object, replicas: int, paths: ScalePaths) -> Object:
    """Set the desired replicas on ``obj``. MUTATES and returns ``obj``."""
    node = obj
    parts = _parts(paths.spec_replicas)
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = replicas
    return obj
