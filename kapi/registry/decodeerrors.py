"""Wrong JSON types in a built-in kind's body, as kube's decoder reports them.

kube decodes a built-in object into Go structs before anything validates it: a
number where a string belongs (``data: {a: 1}`` in a ConfigMap) fails there, as
400 BadRequest ``ConfigMap in version "v1" cannot be handled as a ConfigMap:
json: cannot unmarshal number into Go struct field ConfigMap.data of type
string``, not as a 422 validation error. Custom resources are unstructured, so
for them the same mistake stays a 422 from schema validation.

``TypeMismatch`` is the schema error validation finds; ``decode_error`` turns the
first one into kube's Status, naming the Go struct and type from the published
definitions (the struct is the innermost definition holding the field; the path
is the JSON path from the root, as Go's ``UnmarshalTypeError`` prints it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kapi import errors
from kapi.errors import Cause, StatusError
from kapi.registry.definitions import definitions

__all__ = ["TypeMismatch", "decode_error"]

_REF = "#/$defs/"
_JSON_KIND = {bool: "bool", int: "number", float: "number", str: "string", list: "array", dict: "object"}
_GO_SCALAR = {"string": "string", "boolean": "bool", "number": "float64"}
_SPECIAL = {
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "intstr.IntOrString",
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "resource.Quantity",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time": "v1.Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": "v1.MicroTime",
}


@dataclass(frozen=True)
class TypeMismatch(Cause):
    """A schema ``type`` error, with where it is (``parts``: keys and indexes
    from the root) and the offending value's JSON kind."""

    parts: tuple[Any, ...] = field(default=(), compare=False)
    json_kind: str = field(default="", compare=False)

    @staticmethod
    def kind_of(value: Any) -> str:
        return _JSON_KIND.get(type(value), "value")


def _ref(schema: dict) -> str | None:
    ref = schema.get("$ref")
    if ref is None:
        for sub in schema.get("allOf") or ():
            if isinstance(sub, dict) and "$ref" in sub:
                ref = sub["$ref"]
    return ref[len(_REF) :] if isinstance(ref, str) and ref.startswith(_REF) else None


def _go_type(schema: dict) -> str:
    name = _ref(schema)
    if name is not None:
        if name in _SPECIAL:
            return _SPECIAL[name]
        package, _, short = name.rpartition(".")
        return f"{package.rpartition('.')[2]}.{short}"
    kinds = schema.get("type")
    kinds = [k for k in (kinds if isinstance(kinds, list) else [kinds]) if k and k != "null"]
    kind = kinds[0] if kinds else ""
    if kind == "integer":
        return schema.get("format") or "int64"
    if kind == "array":
        return "[]" + _go_type(schema.get("items") or {})
    if kind == "object":
        values = schema.get("additionalProperties")
        return "map[string]" + (_go_type(values) if isinstance(values, dict) else "interface {}")
    return _GO_SCALAR.get(kind, "interface {}")


def _locate(definition: str, parts: tuple[Any, ...]) -> tuple[str, str, str]:
    """(struct, JSON path, Go type) of the field at ``parts``."""
    defs = definitions()
    struct = definition.rpartition(".")[2]
    schema: dict = defs.get(definition) or {}
    names: list[str] = []
    for part in parts:
        name = _ref(schema)
        if name is not None:
            struct = name.rpartition(".")[2]
            schema = defs.get(name) or {}
        if isinstance(part, int):
            schema = schema.get("items") or {}
            continue
        props = schema.get("properties") or {}
        if part in props:
            names.append(str(part))
            schema = props[part]
        else:
            schema = schema.get("additionalProperties") or {}
    return struct, ".".join(names), _go_type(schema)


def decode_error(definition: str | None, causes: list[Cause]) -> StatusError | None:
    """kube's 400 for the first wrong JSON type among ``causes``, if any."""
    first = next((c for c in causes if isinstance(c, TypeMismatch)), None)
    if first is None or definition is None:
        return None
    struct, path, go_type = _locate(definition, first.parts)
    kind = definition.rpartition(".")[2]
    version = definition.rpartition(".")[0].rpartition(".")[2]
    where = f"{struct}.{path}" if path else struct
    return errors.bad_request(
        f'{kind} in version "{version}" cannot be handled as a {kind}: json: cannot '
        f"unmarshal {first.json_kind} into Go struct field {where} of type {go_type}"
    )
