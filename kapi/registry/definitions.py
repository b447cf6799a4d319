"""The published Kubernetes type definitions, loaded once per process.

The source is the ``kubernetes-validate`` package: the OpenAPI definitions of a
Kubernetes release as JSON Schema 2020-12 (``$defs``, nullable types as
``["string", "null"]``) with every ``x-kubernetes-*`` extension kept. This
module indexes them by group/version/kind, hands out compiled ``jsonschema``
validators, and converts them back to OpenAPI v3 and v2 form for ``/openapi``.

One definition is sharpened for validation: ``Quantity`` strings carry
``format: quantity`` so the format checker sees them (kube checks them while
decoding).
"""

from __future__ import annotations

import copy
import functools
import os
from typing import Any

import orjson

__all__ = [
    "KUBERNETES_SCHEMA_VERSION",
    "definition",
    "definition_name",
    "definitions",
    "referenced_names",
    "to_openapi",
]

KUBERNETES_SCHEMA_VERSION = "v1.34.0"
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_DEFS_PREFIX = "#/$defs/"


def _path() -> str:
    import kubernetes_validate

    base = os.path.dirname(kubernetes_validate.__file__)
    return os.path.join(
        base,
        "kubernetes-json-schema",
        f"{KUBERNETES_SCHEMA_VERSION}-local",
        "_definitions.json",
    )


@functools.cache
def definitions() -> dict[str, dict[str, Any]]:
    """Every definition by name (``io.k8s.api.apps.v1.Deployment``). Do not mutate."""
    with open(_path(), "rb") as fh:
        defs = orjson.loads(fh.read())["$defs"]
    quantity = defs[_QUANTITY]
    defs[_QUANTITY] = {
        **{k: v for k, v in quantity.items() if k != "oneOf"},
        "oneOf": [
            {"type": ["string", "null"], "format": "quantity"},
            {"type": ["number", "null"]},
        ],
    }
    return defs


@functools.cache
def _gvk_index() -> dict[tuple[str, str, str], str]:
    index: dict[tuple[str, str, str], str] = {}
    for name, schema in definitions().items():
        for gvk in schema.get("x-kubernetes-group-version-kind") or ():
            key = (gvk["group"], gvk["version"], gvk["kind"])
            # meta/v1 types (DeleteOptions, WatchEvent) are listed under every group.
            if key not in index or not name.startswith("io.k8s.apimachinery"):
                index[key] = name
    return index


def definition_name(group: str, version: str, kind: str) -> str | None:
    """The definition that describes ``kind`` in ``group/version``, if published."""
    return _gvk_index().get((group, version, kind))


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
