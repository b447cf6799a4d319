"""Output transforms chosen by negotiation: ``as=Table`` and ``as=PartialObjectMetadata``.

Watch events go through the same functions (apiserver ``handlers/response.go``).
"""

from __future__ import annotations

from typing import Any

from kapi import errors
from kapi.registry.resource import ResourceType

__all__ = [
    "OBJECT_TRANSFORMS",
    "apply_transform",
    "partial_object_metadata",
    "to_table",
]

META_GROUP = "meta.k8s.io"
#: Transforms a resource endpoint offers, as (as, g, v).
OBJECT_TRANSFORMS = (
    ("Table", META_GROUP, "v1"),
    ("Table", META_GROUP, "v1beta1"),
    ("PartialObjectMetadata", META_GROUP, "v1"),
    ("PartialObjectMetadata", META_GROUP, "v1beta1"),
    ("PartialObjectMetadataList", META_GROUP, "v1"),
    ("PartialObjectMetadataList", META_GROUP, "v1beta1"),
)


def _is_list(obj: dict) -> bool:
    return isinstance(obj.get("items"), list)


def partial_object_metadata(obj: dict, version: str = "v1") -> dict:
    return {
        "kind": "PartialObjectMetadata",
        "apiVersion": f"{META_GROUP}/{version}",
        "metadata": obj.get("metadata") or {},
    }


def to_table(rt: ResourceType, obj: dict, include_object: str = "Metadata", version: str = "v1") -> dict:
    strategy = rt.strategy
    items = obj["items"] if _is_list(obj) else [obj]
    rows = []
    for item in items:
        row: dict[str, Any] = {"cells": strategy.table_row_cells(item)}
        if include_object == "Object":
            row["object"] = item
        elif include_object != "None":
            row["object"] = partial_object_metadata(item, version)
        rows.append(row)
    meta: dict[str, Any] = {}
    if _is_list(obj):
        for k in ("resourceVersion", "continue", "remainingItemCount"):
            if k in obj.get("metadata", {}):
                meta[k] = obj["metadata"][k]
    else:
        meta["resourceVersion"] = (obj.get("metadata") or {}).get("resourceVersion", "")
    return {
        "kind": "Table",
        "apiVersion": f"{META_GROUP}/{version}",
        "metadata": meta,
        "columnDefinitions": strategy.table_definition(),
        "rows": rows,
    }


def apply_transform(
    rt: ResourceType, obj: dict, transform: tuple[str, str, str] | None, include_object: str | None
) -> dict:
    if transform is None:
        return obj
    as_, _group, version = transform
    if include_object not in (None, "", "None", "Object", "Metadata"):
        raise errors.bad_request(
            f'includeObject: Unsupported value: "{include_object}": supported values: "None", "Metadata", "Object"'
        )
    if as_ == "Table":
        return to_table(rt, obj, include_object or "Metadata", version)
    if as_ == "PartialObjectMetadata":
        if _is_list(obj):
            raise errors.not_acceptable(["application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"])
        return partial_object_metadata(obj, version)
    if as_ == "PartialObjectMetadataList":
        if not _is_list(obj):
            raise errors.not_acceptable(["application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"])
        return {
            "kind": "PartialObjectMetadataList",
            "apiVersion": f"{META_GROUP}/{version}",
            "metadata": obj.get("metadata") or {},
            "items": [partial_object_metadata(i, version) for i in obj["items"]],
        }
    return obj
