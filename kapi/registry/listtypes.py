"""Uniqueness of ``x-kubernetes-list-type: set`` and ``map`` lists in custom resources.

apiextensions-apiserver's ``listtype.ValidateListSetsAndMaps``: a set may not
hold the same element twice, a map list may not hold two items with the same
``x-kubernetes-list-map-keys`` values (an absent key counts as a value of its
own). The second and later occurrences of a repeated element are reported
once each, ``spec.ports[2]: Duplicate value: map[string]interface {}{"port":80}``,
and a map list item that is not an object is ``Invalid``.
"""

from __future__ import annotations

import json
from typing import Any

from kapi.errors import Cause
from kapi.validation.field import go_quote

__all__ = ["go_value", "list_type_causes"]

Schema = dict[str, Any]


def go_value(value: Any) -> str:
    """A JSON value as Go's ``%#v`` prints the unstructured form
    (``map[string]interface {}{"a":1}``, ``[]interface {}{"x"}``, ``"s"``)."""
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, dict):
        inner = ", ".join(f"{go_quote(k)}:{go_value(value[k])}" for k in sorted(value))
        return f"map[string]interface {{}}{{{inner}}}"
    if isinstance(value, list):
        return f"[]interface {{}}{{{', '.join(go_value(v) for v in value)}}}"
    return str(value)


def _rendered(value: Any) -> str:
    """What ``field.Duplicate`` prints: scalars bare or quoted, the rest ``%#v``."""
    if value is None:
        return "null"
    return go_value(value)


def list_type_causes(obj: Any, schema: Schema, path: str = "") -> list[Cause]:
    """Duplicate elements of set and map lists anywhere in ``obj``. Does not mutate."""
    causes: list[Cause] = []
    _walk(obj, schema, path, causes)
    return causes


def _walk(obj: Any, schema: Any, path: str, causes: list[Cause]) -> None:
    if not isinstance(schema, dict):
        return
    if isinstance(obj, dict):
        props = schema.get("properties") or {}
        additional = schema.get("additionalProperties")
        for key, value in obj.items():
            if key in props:
                _walk(value, props[key], f"{path}.{key}" if path else key, causes)
            elif isinstance(additional, dict):
                _walk(value, additional, f"{path}[{key}]", causes)
    elif isinstance(obj, list):
        kind = schema.get("x-kubernetes-list-type")
        if kind == "set":
            for index in _repeated(obj):
                causes.append(
                    Cause(
                        "FieldValueDuplicate",
                        f"Duplicate value: {_rendered(obj[index])}",
                        f"{path}[{index}]",
                    )
                )
        elif kind == "map":
            _map_list(obj, schema.get("x-kubernetes-list-map-keys") or [], path, causes)
        items = schema.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(obj):
                _walk(item, items, f"{path}[{index}]", causes)


def _repeated(values: list[Any]) -> list[int]:
    """Indexes of the second occurrence of each repeated value (kube reports each
    repeated value once, at its first repeat)."""
    seen: dict[Any, int] = {}
    out = []
    for index, value in enumerate(values):
        token = json.dumps(value, sort_keys=True, separators=(",", ":"))
        seen[token] = seen.get(token, 0) + 1
        if seen[token] == 2:
            out.append(index)
    return out


def _map_list(
    items: list[Any], keys: list[str], path: str, causes: list[Cause]
) -> None:
    for index, item in enumerate(items):
        if item is not None and not isinstance(item, dict):
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f"Invalid value: {_rendered(item)}: must be an object for an array of list-type map",
                    f"{path}[{index}]",
                )
            )
            return
    if len(items) <= 1:
        return
    tuples = [
        {k: item[k] for k in keys if k in item} if isinstance(item, dict) else {}
        for item in items
    ]
    for index in _repeated(tuples):
        causes.append(
            Cause(
                "FieldValueDuplicate",
                f"Duplicate value: {_rendered(tuples[index])}",
                f"{path}[{index}]",
            )
        )
