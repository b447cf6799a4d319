"""kube's ``ValidFieldPath``: the field a JSONPath-like ``fieldPath`` (of a
CEL rule, a selectable field, a printer column) names in a structural schema.

Its own module, free of the ``cel`` package, so that the CRD strategy can
check paths without loading the rule engine (``kapi.cel.rules``)."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["field_path_target"]

Schema = dict[str, Any]

_PATH_PART = re.compile(r"\.([A-Za-z_][A-Za-z0-9_-]*)|\['((?:[^'\\]|\\.)*)'\]")


def field_path_target(
    path: str, schema: Schema, prefix: str = ""
) -> tuple[str, Schema] | None:
    """kube's ``ValidFieldPath``: ``.a.b['c']`` after ``prefix`` as ``a.b[c]`` or
    ``a.b.c`` with the schema it names, or None if it names no field of ``schema``."""
    out = prefix
    pos = 0
    node = schema
    while pos < len(path):
        match = _PATH_PART.match(path, pos)
        if not match or not isinstance(node, dict):
            return None
        pos = match.end()
        name = match.group(1) if match.group(1) is not None else match.group(2)
        if node.get("properties") is not None:
            if name not in node["properties"]:
                return None
            node = node["properties"][name]
            out = f"{out}.{name}" if out else name
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
            out = f"{out}[{name}]"
        else:
            return None
    return out, node
