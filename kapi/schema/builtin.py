"""The built-in types' schemas: Kubernetes' published 1.37 definitions.

They come from the ``kubernetes-validate`` package (the OpenAPI definitions as JSON
Schema, ``x-kubernetes-*`` extensions kept). They are loaded once per process, on
first use.
"""

from __future__ import annotations

import functools
from importlib import resources
from typing import TYPE_CHECKING, Any

import orjson

from kapi.schema.enums import ENUMS
from kapi.schema.keydefaults import KEY_DEFAULTS
from kapi.schema.typeschema import TypeSchema

if TYPE_CHECKING:
    from kapi.registry.resource import ResourceType

__all__ = [
    "KUBERNETES_SCHEMA_VERSION",
    "builtin_definitions",
    "definition_name",
    "schema_for",
]

#: The Kubernetes release kapi validates against and reports at /version.
KUBERNETES_SCHEMA_VERSION = "v1.37.0"
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"

# Groups whose definitions live under a different Go package name.
_GROUP_PACKAGES = {
    "": "core",
    "events.k8s.io": "events",
    "coordination.k8s.io": "coordination",
}


@functools.cache
def builtin_definitions() -> dict[str, dict[str, Any]]:
    """Every definition by name (``io.k8s.api.core.v1.ConfigMap``). Do not mutate.

    Loaded once per process; every user (validation, OpenAPI, merge, apply) shares
    this one copy.
    """
    path = (
        resources.files("kubernetes_validate")
        / "kubernetes-json-schema"
        / f"{KUBERNETES_SCHEMA_VERSION}-local"
        / "_definitions.json"
    )
    defs = orjson.loads(path.read_bytes())["$defs"]
    # The published Quantity is a string-or-number oneOf without a format;
    # give its string branch one so validation can check quantity syntax.
    quantity = defs[_QUANTITY]
    defs[_QUANTITY] = {
        **{k: v for k, v in quantity.items() if k != "oneOf"},
        "oneOf": [
            {"type": ["string", "null"], "format": "quantity"},
            {"type": ["number", "null"]},
        ],
    }
    _add_enums(defs)
    _add_key_defaults(defs)
    return defs


def _add_enums(defs: dict[str, dict[str, Any]]) -> None:
    """Put ``kapi.schema.enums`` into the definitions (on ``items`` for a list).
    A nullable field also takes ``null`` (an omitted value). MUTATES ``defs``."""
    for name, fields in ENUMS.items():
        properties = dict(defs[name]["properties"])
        for field, values in fields.items():
            prop = dict(properties[field])
            types = prop.get("type")
            target = prop
            if types == "array" or (isinstance(types, list) and "array" in types):
                target = prop["items"] = dict(prop["items"])
            kinds = target.get("type")
            nullable = isinstance(kinds, list) and "null" in kinds
            target["enum"] = [*values, None] if nullable else list(values)
            properties[field] = prop
        defs[name] = {**defs[name], "properties": properties}


def _add_key_defaults(defs: dict[str, dict[str, Any]]) -> None:
    """Put ``kapi.schema.keydefaults`` into the definitions. MUTATES ``defs``."""
    for name, fields in KEY_DEFAULTS.items():
        properties = dict(defs[name]["properties"])
        for field, value in fields.items():
            properties[field] = {**properties[field], "default": value}
        defs[name] = {**defs[name], "properties": properties}


@functools.cache
def _by_gvk() -> dict[tuple[str, str, str], str]:
    index: dict[tuple[str, str, str], str] = {}
    for name, node in builtin_definitions().items():
        for gvk in node.get("x-kubernetes-group-version-kind") or ():
            key = (gvk.get("group", ""), gvk["version"], gvk["kind"])
            # meta/v1 types (DeleteOptions, WatchEvent) are listed under every group.
            if key not in index or not name.startswith("io.k8s.apimachinery"):
                index[key] = name
    return index


def definition_name(group: str, version: str, kind: str) -> str | None:
    """The definition that describes ``kind`` in ``group/version``, if published."""
    name = _by_gvk().get((group, version, kind))
    if name is not None:
        return name
    package = _GROUP_PACKAGES.get(group, group.split(".")[0])
    guess = f"io.k8s.api.{package}.{version}.{kind}"
    return guess if guess in builtin_definitions() else None


@functools.cache
def _builtin_schema(group: str, version: str, kind: str) -> TypeSchema | None:
    name = definition_name(group, version, kind)
    if name is None:
        return None
    defs = builtin_definitions()
    return TypeSchema(defs[name], defs)


def schema_for(rt: ResourceType) -> TypeSchema | None:
    """The schema of a resource type's objects, or ``None`` if it has none."""
    custom = rt.extra.get("openapi_schema")
    if custom is not None:
        cached = rt.extra.get("_type_schema")
        if cached is None:
            cached = TypeSchema(
                custom, custom.get("$defs") or custom.get("definitions")
            )
            rt.extra["_type_schema"] = cached
        return cached
    if rt.extra.get("custom"):
        return None
    return _builtin_schema(rt.group, rt.version, rt.kind)
