"""autoscaling/v1 HorizontalPodAutoscaler: the v2 strategy, seen through the v1 form.

Stored once, in autoscaling/v2 form (``kapi.kinds.hpaconversion``); this
type converts on the way in and out, as kube serves both versions of one object.
"""

from __future__ import annotations

from typing import Any

from kapi import errors
from kapi.kinds.cluster import HorizontalPodAutoscalerStrategy
from kapi.kinds.hpaconversion import (
    CONDITIONS_ANNOTATION,
    CURRENT_METRICS_ANNOTATION,
    ConversionError,
    v1_from_v2,
    v2_from_v1,
)
from kapi.registry.strategy import Object, Strategy

__all__ = ["HorizontalPodAutoscalerV1Strategy"]

#: The annotations that carry v2 status a v1 client cannot write on the main resource.
_STATUS_ANNOTATIONS = (CURRENT_METRICS_ANNOTATION, CONDITIONS_ANNOTATION)


def _default(obj: Object) -> None:
    """kube's autoscaling/v1 defaults: minReplicas 1 (the cpu target defaults in v2)."""
    spec = obj.get("spec")
    if isinstance(spec, dict):
        spec.setdefault("minReplicas", 1)


def _keep_status_annotations(obj: Object, old: Object) -> None:
    """The status annotations of ``obj`` become those of ``old``. MUTATES ``obj``."""
    old_notes = (old.get("metadata") or {}).get("annotations") or {}
    meta = obj.setdefault("metadata", {})
    notes = {
        k: v
        for k, v in (meta.get("annotations") or {}).items()
        if k not in _STATUS_ANNOTATIONS
    }
    notes.update({k: v for k, v in old_notes.items() if k in _STATUS_ANNOTATIONS})
    if notes:
        meta["annotations"] = notes
    else:
        meta.pop("annotations", None)


class HorizontalPodAutoscalerV1Strategy(HorizontalPodAutoscalerStrategy):
    def prepare_for_create(self, obj: Object) -> None:
        """No status on create, not even the part of it that rides in annotations."""
        obj.pop("status", None)
        _default(obj)
        _keep_status_annotations(obj, {})

    def prepare_for_update(self, obj: Object, old: Object) -> None:
        """Status is the stored one: with it go the annotations that hold the part
        of it v1 has no field for."""
        Strategy.prepare_for_update(self, obj, old)
        _default(obj)
        _keep_status_annotations(obj, old)

    def to_storage(self, obj: Object, version: str) -> Object:
        try:
            return v2_from_v1(obj)
        except ConversionError as exc:
            raise errors.bad_request(str(exc)) from None

    def from_storage(self, obj: Object, version: str) -> Object:
        return v1_from_v2(obj)

    def serves_stored_form(self, version: str) -> bool:
        return False

    def table_cells(self, obj: Object) -> list[Any]:
        try:
            return super().table_cells(v2_from_v1(obj))
        except ConversionError:
            return super().table_cells({**obj, "metadata": {}})
