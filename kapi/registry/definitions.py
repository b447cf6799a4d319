"""The published Kubernetes type definitions as the registry uses them.

``kapi.schema.builtin`` loads them once per process from the
``kubernetes-validate`` package (JSON Schema 2020-12, ``$defs``, every
``x-kubernetes-*`` extension kept); this module re-exports that copy and
converts definitions back to OpenAPI v3 and v2 form for ``/openapi``.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from kapi.schema.builtin import (
    KUBERNETES_SCHEMA_VERSION,
    builtin_definitions,
    definition_name,
)

__all__ = [
    "KUBERNETES_SCHEMA_VERSION",
    "definition",
    "definition_name",
    "definitions",
    "referenced_names",
    "to_openapi",
]

_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_DEFS_PREFIX = "#/$defs/"

#: The one loaded copy of the published definitions (see ``kapi.schema.builtin``).
definitions = builtin_definitions


def definition(name: str) -> dict[str, Any]:
    return definitions()[name]


def _refs(node: Any, out: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFS_PREFIX):
            out.add(ref[len(_DEFS_PREFIX) :])
        for value in node.values():
            _refs(value, out)
    elif isinstance(node, list):
        for value in node:
            _refs(value, out)


@functools.cache
def _direct_refs(name: str) -> frozenset[str]:
    out: set[str] = set()
    _refs(definitions()[name], out)
    return frozenset(out)


def referenced_names(roots: list[str]) -> list[str]:
    """``roots`` and every definition they reach through ``$ref``, sorted."""
    seen: set[str] = set()
    stack = list(roots)
    while stack:
        name = stack.pop()
        if name in seen or name not in definitions():
            continue
        seen.add(name)
        stack.extend(_direct_refs(name))
    return sorted(seen)


def to_openapi(schema: Any, ref_prefix: str, v3: bool = True) -> Any:
    """A JSON Schema definition in OpenAPI form: nullable type lists become one type,
    ``$ref`` points at ``ref_prefix`` (``#/components/schemas/`` or ``#/definitions/``),
    and IntOrString / Quantity read as kube publishes them. Returns a new object."""
    if isinstance(schema, list):
        return [to_openapi(s, ref_prefix, v3) for s in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(_DEFS_PREFIX):
        target = ref_prefix + ref[len(_DEFS_PREFIX) :]
        rest = {
            k: to_openapi(v, ref_prefix, v3) for k, v in schema.items() if k != "$ref"
        }
        if v3 and rest:
            # OpenAPI 3.0 ignores siblings of $ref: kube wraps it in allOf.
            return {**rest, "allOf": [{"$ref": target}]}
        return {**rest, "$ref": target}
    one_of = schema.get("oneOf")
    if isinstance(one_of, list) and len(one_of) == 2:
        types = {tuple(_types(s)) for s in one_of}
        if types == {("string",), ("integer",)}:
            out = {k: v for k, v in schema.items() if k != "oneOf"}
            return {**out, "type": "string", "format": "int-or-string"}
        if types == {("string",), ("number",)}:
            out = {k: v for k, v in schema.items() if k != "oneOf"}
            return {**out, "type": "string"}
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type":
            kinds = _types(schema)
            if len(kinds) == 1:
                out["type"] = kinds[0]
            continue
        if key in ("properties", "patternProperties"):
            out[key] = {k: to_openapi(v, ref_prefix, v3) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "allOf", "anyOf", "oneOf", "not"):
            out[key] = to_openapi(value, ref_prefix, v3)
        elif key == "enum" and isinstance(value, list):
            out[key] = [v for v in value if v is not None]
        else:
            out[key] = copy.deepcopy(value)
    return out


def _types(schema: dict[str, Any]) -> list[str]:
    kind = schema.get("type")
    if kind is None:
        return []
    kinds = kind if isinstance(kind, list) else [kind]
    return [k for k in kinds if k != "null"]
