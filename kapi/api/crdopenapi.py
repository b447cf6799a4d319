"""A CRD version's schema as kube-apiserver publishes it in OpenAPI v2 and v3.

kube's ``builder.buildKubeNative``: the version's ``openAPIV3Schema`` with
``apiVersion``, ``kind`` and a ``metadata`` reference to ObjectMeta added, at the
root and in every ``x-kubernetes-embedded-resource`` (which also requires
``apiVersion`` and ``kind``). OpenAPI v2 is what kubectl validates against, so
there the schema first goes through ``ToStructuralOpenAPIV2``: no junctors, and
no ``properties``/``items``/``type`` where they would make kubectl refuse
fields the server keeps (nullable and ``x-kubernetes-preserve-unknown-fields``
nodes); a schema that keeps unknown fields at its root is published as a bare
``type: object``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["OBJECT_META", "crd_schema"]

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
_PRESERVE = "x-kubernetes-preserve-unknown-fields"
_JUNCTORS = ("allOf", "anyOf", "oneOf", "not")
_METADATA = (
    "Standard object's metadata. More info: "
    "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)
_ROOT_TYPE_META = {
    "apiVersion": "APIVersion defines the versioned schema of this representation of an object.",
    "kind": "Kind is a string value representing the REST resource this object represents.",
}
_EMBEDDED_TYPE_META = {
    "apiVersion": "apiVersion defines the versioned schema of this representation of an "
    "object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#resources",
    "kind": "kind is a string value representing the type of this object. In CamelCase. "
    "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#types-kinds",
}


def crd_schema(schema: dict[str, Any], prefix: str, v2: bool) -> dict[str, Any]:
    """The published form of ``schema`` (the user's ``openAPIV3Schema``);
    ``prefix`` is where definitions live (``#/definitions/`` in v2). Returns a
    new object."""
    if v2 and schema.get(_PRESERVE):
        return {"type": "object"}
    out = _to_v2(schema) if v2 else dict(schema)
    _add_type_meta(out, prefix, _ROOT_TYPE_META)
    out.setdefault("type", "object")
    return _with_embedded(out, prefix, v2)


def _meta_ref(prefix: str) -> dict[str, Any]:
    if prefix.startswith("#/components"):
        return {"description": _METADATA, "allOf": [{"$ref": prefix + OBJECT_META}]}
    return {"description": _METADATA, "$ref": prefix + OBJECT_META}


def _add_type_meta(node: dict[str, Any], prefix: str, words: dict[str, str]) -> None:
    """MUTATES ``node``: apiVersion, kind and metadata properties."""
    props = dict(node.get("properties") or {})
    for key, description in words.items():
        props[key] = {"type": "string", "description": description}
    props["metadata"] = _meta_ref(prefix)
    node["properties"] = props


def _children(node: dict[str, Any], convert) -> dict[str, Any]:
    out = dict(node)
    if isinstance(out.get("properties"), dict):
        out["properties"] = {k: convert(v) for k, v in out["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), dict):
            out[key] = convert(out[key])
    return out


def _with_embedded(node: Any, prefix: str, v2: bool) -> Any:
    """kube's ``addEmbeddedProperties``, below the root."""
    if not isinstance(node, dict):
        return node
    return _children(node, lambda child: _embedded(child, prefix, v2))


def _embedded(node: Any, prefix: str, v2: bool) -> Any:
    if not isinstance(node, dict):
        return node
    out = _with_embedded(node, prefix, v2)
    if v2 and out.get(_PRESERVE):
        return out
    if out.get("x-kubernetes-embedded-resource"):
        _add_type_meta(out, prefix, _EMBEDDED_TYPE_META)
        required = list(out.get("required") or [])
        out["required"] = required + [
            k for k in ("kind", "apiVersion") if k not in required
        ]
    return out


def _to_v2(node: Any) -> Any:
    """kube's ``ToStructuralOpenAPIV2`` (parents before children, as its visitor)."""
    if not isinstance(node, dict):
        return node
    out = {k: v for k, v in node.items() if k not in _JUNCTORS}
    props = out.get("properties")
    if isinstance(props, dict) and out.get("required"):
        nullable = {
            k for k, v in props.items() if isinstance(v, dict) and v.get("nullable")
        }
        out["required"] = [r for r in out["required"] if r not in nullable]
    extra = out.get("additionalProperties")
    if isinstance(extra, dict) and extra.get("nullable"):
        out.pop("required", None)
    if not out.get("required"):
        out.pop("required", None)
    if out.pop("nullable", False):
        for key in ("type", "items", "properties"):
            out.pop(key, None)
    if out.get(_PRESERVE):
        out.pop("items", None)
        out.pop("properties", None)
    if "items" not in out and out.get("type") == "array":
        out.pop("type")
    if out.get(_PRESERVE) and out.get("type") == "object":
        out.pop("type")
    return _children(out, _to_v2)
