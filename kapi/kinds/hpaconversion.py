"""HorizontalPodAutoscaler between autoscaling/v1 and the stored autoscaling/v2 form.

kube stores HPAs once and serves them as v1 and v2; this follows its
``pkg/apis/autoscaling/v1/conversion.go``. v1 has one CPU target
(``spec.targetCPUUtilizationPercentage``); the first cpu Resource metric with a
Utilization target maps to it. Every other v2 metric, the current metrics, the
conditions and ``spec.behavior`` travel in annotations (metrics in the older,
v2beta1-shaped v1 ``MetricSpec`` form) so that a v1 read-modify-write keeps them.
The annotations exist only in v1: a v2 object never carries them
(``drop_round_trip_annotations``, kube's ``DropRoundTripHorizontalPodAutoscalerAnnotations``).
"""

from __future__ import annotations

import json
from typing import Any

__all__ = [
    "DEFAULT_CPU_UTILIZATION",
    "ROUND_TRIP_ANNOTATIONS",
    "default_metrics",
    "drop_round_trip_annotations",
    "v1_from_v2",
    "v2_from_v1",
]

Object = dict[str, Any]

METRICS_ANNOTATION = "autoscaling.alpha.kubernetes.io/metrics"
CURRENT_METRICS_ANNOTATION = "autoscaling.alpha.kubernetes.io/current-metrics"
CONDITIONS_ANNOTATION = "autoscaling.alpha.kubernetes.io/conditions"
BEHAVIOR_ANNOTATION = "autoscaling.alpha.kubernetes.io/behavior"
ROUND_TRIP_ANNOTATIONS = (
    METRICS_ANNOTATION,
    BEHAVIOR_ANNOTATION,
    CURRENT_METRICS_ANNOTATION,
    CONDITIONS_ANNOTATION,
)

#: kube's ``autoscaling.DefaultCPUUtilization``.
DEFAULT_CPU_UTILIZATION = 80


class ConversionError(ValueError):
    """A round-trip annotation that does not hold the JSON kube wrote there."""


def _pruned(d: dict) -> dict:
    return {k: v for k, v in d.items() if v is not None}


def _cpu_metric(utilization: int) -> Object:
    return {
        "type": "Resource",
        "resource": {
            "name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": utilization},
        },
    }


def default_metrics(spec: Object) -> None:
    """kube's v2 defaulting: no metrics means a cpu target of 80% utilization.
    MUTATES ``spec``."""
    if not spec.get("metrics"):
        spec["metrics"] = [_cpu_metric(DEFAULT_CPU_UTILIZATION)]


def _is_cpu_utilization(metric: Object) -> bool:
    res = metric.get("resource") or {}
    return (
        metric.get("type") == "Resource"
        and res.get("name") == "cpu"
        and (res.get("target") or {}).get("averageUtilization") is not None
    )


# -- metric specs ------------------------------------------------------------------
def _spec_to_v1(metric: Object) -> Object:
    kind = metric.get("type")
    out: Object = {"type": kind}
    if kind in ("Resource", "ContainerResource"):
        field = "resource" if kind == "Resource" else "containerResource"
        src = metric.get(field) or {}
        target = src.get("target") or {}
        out[field] = _pruned(
            {
                "name": src.get("name"),
                "targetAverageUtilization": target.get("averageUtilization"),
                "targetAverageValue": target.get("averageValue"),
                "container": src.get("container"),
            }
        )
    elif kind == "Pods":
        src = metric.get("pods") or {}
        ident, target = src.get("metric") or {}, src.get("target") or {}
        out["pods"] = _pruned(
            {
                "metricName": ident.get("name"),
                "targetAverageValue": target.get("averageValue") or "0",
                "selector": ident.get("selector"),
            }
        )
    elif kind == "Object":
        src = metric.get("object") or {}
        ident, target = src.get("metric") or {}, src.get("target") or {}
        out["object"] = _pruned(
            {
                "target": src.get("describedObject"),
                "metricName": ident.get("name"),
                "targetValue": target.get("value") or "0",
                "selector": ident.get("selector"),
                "averageValue": target.get("averageValue"),
            }
        )
    elif kind == "External":
        src = metric.get("external") or {}
        ident, target = src.get("metric") or {}, src.get("target") or {}
        out["external"] = _pruned(
            {
                "metricName": ident.get("name"),
                "metricSelector": ident.get("selector"),
                "targetValue": target.get("value"),
                "targetAverageValue": target.get("averageValue"),
            }
        )
    return out


def _spec_from_v1(metric: Object) -> Object:
    kind = metric.get("type")
    out: Object = {"type": kind}
    if kind in ("Resource", "ContainerResource"):
        field = "resource" if kind == "Resource" else "containerResource"
        src = metric.get(field) or {}
        utilization = src.get("targetAverageUtilization")
        out[field] = _pruned(
            {
                "name": src.get("name"),
                "container": src.get("container"),
                "target": _pruned(
                    {
                        "type": "AverageValue"
                        if utilization is None
                        else "Utilization",
                        "averageUtilization": utilization,
                        "averageValue": src.get("targetAverageValue"),
                    }
                ),
            }
        )
    elif kind == "Pods":
        src = metric.get("pods") or {}
        out["pods"] = {
            "metric": _pruned(
                {"name": src.get("metricName"), "selector": src.get("selector")}
            ),
            "target": {
                "type": "AverageValue",
                "averageValue": src.get("targetAverageValue"),
            },
        }
    elif kind == "Object":
        src = metric.get("object") or {}
        average = src.get("averageValue")
        out["object"] = {
            "describedObject": src.get("target") or {},
            "metric": _pruned(
                {"name": src.get("metricName"), "selector": src.get("selector")}
            ),
            "target": _pruned(
                {
                    "type": "Value" if average is None else "AverageValue",
                    "value": src.get("targetValue"),
                    "averageValue": average,
                }
            ),
        }
    elif kind == "External":
        src = metric.get("external") or {}
        value = src.get("targetValue")
        out["external"] = {
            "metric": _pruned(
                {"name": src.get("metricName"), "selector": src.get("metricSelector")}
            ),
            "target": _pruned(
                {
                    "type": "AverageValue" if value is None else "Value",
                    "value": value,
                    "averageValue": src.get("targetAverageValue"),
                }
            ),
        }
    return out


# -- metric statuses ---------------------------------------------------------------
def _status_to_v1(metric: Object) -> Object:
    kind = metric.get("type")
    out: Object = {"type": kind}
    if kind in ("Resource", "ContainerResource"):
        field = "resource" if kind == "Resource" else "containerResource"
        src = metric.get(field) or {}
        current = src.get("current") or {}
        out[field] = _pruned(
            {
                "name": src.get("name"),
                "currentAverageUtilization": current.get("averageUtilization"),
                "currentAverageValue": current.get("averageValue") or "0",
                "container": src.get("container"),
            }
        )
    elif kind == "Pods":
        src = metric.get("pods") or {}
        ident, current = src.get("metric") or {}, src.get("current") or {}
        out["pods"] = _pruned(
            {
                "metricName": ident.get("name"),
                "currentAverageValue": current.get("averageValue") or "0",
                "selector": ident.get("selector"),
            }
        )
    elif kind == "Object":
        src = metric.get("object") or {}
        ident, current = src.get("metric") or {}, src.get("current") or {}
        out["object"] = _pruned(
            {
                "target": src.get("describedObject"),
                "metricName": ident.get("name"),
                "currentValue": current.get("value") or "0",
                "selector": ident.get("selector"),
                "averageValue": current.get("averageValue"),
            }
        )
    elif kind == "External":
        src = metric.get("external") or {}
        ident, current = src.get("metric") or {}, src.get("current") or {}
        out["external"] = _pruned(
            {
                "metricName": ident.get("name"),
                "metricSelector": ident.get("selector"),
                "currentValue": current.get("value") or "0",
                "currentAverageValue": current.get("averageValue"),
            }
        )
    return out


def _status_from_v1(metric: Object) -> Object:
    kind = metric.get("type")
    out: Object = {"type": kind}
    if kind in ("Resource", "ContainerResource"):
        field = "resource" if kind == "Resource" else "containerResource"
        src = metric.get(field) or {}
        out[field] = _pruned(
            {
                "name": src.get("name"),
                "container": src.get("container"),
                "current": _pruned(
                    {
                        "averageUtilization": src.get("currentAverageUtilization"),
                        "averageValue": src.get("currentAverageValue"),
                    }
                ),
            }
        )
    elif kind == "Pods":
        src = metric.get("pods") or {}
        out["pods"] = {
            "metric": _pruned(
                {"name": src.get("metricName"), "selector": src.get("selector")}
            ),
            "current": _pruned({"averageValue": src.get("currentAverageValue")}),
        }
    elif kind == "Object":
        src = metric.get("object") or {}
        out["object"] = {
            "describedObject": src.get("target") or {},
            "metric": _pruned(
                {"name": src.get("metricName"), "selector": src.get("selector")}
            ),
            "current": _pruned(
                {
                    "value": src.get("currentValue"),
                    "averageValue": src.get("averageValue"),
                }
            ),
        }
    elif kind == "External":
        src = metric.get("external") or {}
        out["external"] = {
            "metric": _pruned(
                {"name": src.get("metricName"), "selector": src.get("metricSelector")}
            ),
            "current": _pruned(
                {
                    "value": src.get("currentValue"),
                    "averageValue": src.get("currentAverageValue"),
                }
            ),
        }
    return out


# -- whole objects -----------------------------------------------------------------
def _encode(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _decode(annotations: dict, key: str, shape: type = list) -> Any:
    """The JSON of annotation ``key`` (removed): a list of objects, or with
    ``shape`` dict one object."""
    try:
        value = json.loads(annotations.pop(key))
    except (TypeError, ValueError):
        raise ConversionError(
            f"metadata.annotations[{key}] is not valid JSON"
        ) from None
    if shape is dict:
        if not isinstance(value, dict):
            raise ConversionError(f"metadata.annotations[{key}] must be a JSON object")
    elif not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ConversionError(
            f"metadata.annotations[{key}] must be a JSON list of objects"
        )
    return value


def drop_round_trip_annotations(obj: Object) -> None:
    """Remove the v1-only annotations from a v2 object. MUTATES ``obj``."""
    meta = obj.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if not isinstance(annotations, dict):
        return
    for key in ROUND_TRIP_ANNOTATIONS:
        annotations.pop(key, None)
    if not annotations:
        meta.pop("annotations", None)


def v1_from_v2(obj: Object) -> Object:
    """The autoscaling/v1 form of a stored autoscaling/v2 HPA (a new object)."""
    meta = dict(obj.get("metadata") or {})
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    annotations = {
        k: v
        for k, v in (meta.get("annotations") or {}).items()
        if k not in ROUND_TRIP_ANNOTATIONS
    }

    metrics = spec.get("metrics") or []
    others = [_spec_to_v1(m) for m in metrics if not _is_cpu_utilization(m)]
    if others:
        annotations[METRICS_ANNOTATION] = _encode(others)
    if spec.get("behavior") is not None:
        annotations[BEHAVIOR_ANNOTATION] = _encode(spec["behavior"])
    if status.get("currentMetrics"):
        annotations[CURRENT_METRICS_ANNOTATION] = _encode(
            [_status_to_v1(m) for m in status["currentMetrics"]]
        )
    if status.get("conditions"):
        annotations[CONDITIONS_ANNOTATION] = _encode(status["conditions"])
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)

    v1_spec: Object = {
        k: spec[k]
        for k in ("scaleTargetRef", "minReplicas", "maxReplicas")
        if k in spec
    }
    for metric in metrics:
        res = metric.get("resource") or {}
        if metric.get("type") == "Resource" and res.get("name") == "cpu":
            utilization = (res.get("target") or {}).get("averageUtilization")
            if utilization is not None:
                v1_spec["targetCPUUtilizationPercentage"] = utilization
            break

    v1_status: Object = _pruned(
        {
            "observedGeneration": status.get("observedGeneration"),
            "lastScaleTime": status.get("lastScaleTime"),
        }
    )
    v1_status["currentReplicas"] = status.get("currentReplicas", 0)
    v1_status["desiredReplicas"] = status.get("desiredReplicas", 0)
    for metric in status.get("currentMetrics") or ():
        res = metric.get("resource") or {}
        if metric.get("type") == "Resource" and res.get("name") == "cpu":
            utilization = (res.get("current") or {}).get("averageUtilization")
            if utilization is not None:
                v1_status["currentCPUUtilizationPercentage"] = utilization

    return {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": meta,
        "spec": v1_spec,
        "status": v1_status,
    }


def v2_from_v1(obj: Object) -> Object:
    """The stored autoscaling/v2 form of an autoscaling/v1 HPA (a new object).
    Raises ``ConversionError`` for a round-trip annotation that is not kube's JSON."""
    meta = dict(obj.get("metadata") or {})
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    annotations = dict(meta.get("annotations") or {})

    v2_spec: Object = {
        k: spec[k]
        for k in ("scaleTargetRef", "minReplicas", "maxReplicas")
        if k in spec
    }
    metrics: list[Object] = []
    if METRICS_ANNOTATION in annotations:
        metrics = [_spec_from_v1(m) for m in _decode(annotations, METRICS_ANNOTATION)]
    if spec.get("targetCPUUtilizationPercentage") is not None:
        metrics.append(_cpu_metric(spec["targetCPUUtilizationPercentage"]))
    v2_spec["metrics"] = metrics
    default_metrics(v2_spec)
    if BEHAVIOR_ANNOTATION in annotations:
        v2_spec["behavior"] = _decode(annotations, BEHAVIOR_ANNOTATION, dict)

    v2_status: Object = _pruned(
        {
            "observedGeneration": status.get("observedGeneration"),
            "lastScaleTime": status.get("lastScaleTime"),
            "currentReplicas": status.get("currentReplicas") or None,
        }
    )
    if status.get("currentCPUUtilizationPercentage") is not None:
        v2_status["currentMetrics"] = [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "current": {
                        "averageUtilization": status["currentCPUUtilizationPercentage"]
                    },
                },
            }
        ]
    if CURRENT_METRICS_ANNOTATION in annotations:
        v2_status["currentMetrics"] = [
            _status_from_v1(m) for m in _decode(annotations, CURRENT_METRICS_ANNOTATION)
        ]
    if CONDITIONS_ANNOTATION in annotations:
        v2_status["conditions"] = _decode(annotations, CONDITIONS_ANNOTATION)
    if v2_status or status.get("desiredReplicas"):
        v2_status["desiredReplicas"] = status.get("desiredReplicas", 0)

    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    out: Object = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": meta,
        "spec": v2_spec,
    }
    if v2_status:
        out["status"] = v2_status
    return out
