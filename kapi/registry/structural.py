"""Structural schemas: pruning, defaulting and ``x-kubernetes-validations`` (CEL).

The walkers here follow one schema node per object node, the way
apiextensions-apiserver's ``structuralschema`` package does:

* ``prune`` drops fields no schema describes (unless
  ``x-kubernetes-preserve-unknown-fields``) and reports their paths, so that
  ``fieldValidation=Strict`` can refuse them;
* ``apply_defaults`` fills ``default:`` values into missing fields;
* ``cel_causes``/``compile_rules`` (from ``kapi.cel.rules``) run and check
  ``x-kubernetes-validations`` rules;
* ``structural_causes`` checks a CRD schema is structural.

Built-in definitions use ``$ref``; ``resolve`` follows them. An object node with
neither ``properties`` nor ``additionalProperties`` is kept whole in a built-in
schema (``RawExtension``) and pruned to nothing in a CRD schema, as kube does.
"""

from __future__ import annotations

import copy
from typing import Any

from kapi.errors import Cause
from kapi.registry.definitions import definitions

__all__ = [
    "apply_defaults",
    "cel_causes",
    "compile_rules",
    "prune",
    "resolve",
    "structural_causes",
]

Schema = dict[str, Any]
_DEFS = "#/$defs/"


# kapi.cel.rules, and with it the ``cel`` package (a quarter of a second to
# import), is loaded by the first process that writes a custom resource or a
# CRD, not by every process that imports the registry (Celery beat, serve, an
# API worker that never sees a CRD).
def cel_causes(obj: Any, old: Any, schema: Schema, path: str = "") -> list[Cause]:
    """``kapi.cel.rules.cel_causes``: the ``x-kubernetes-validations`` rules of
    ``schema`` run on ``obj`` (``old`` on update)."""
    from kapi.cel.rules import cel_causes as run

    return run(obj, old, schema, path)


def compile_rules(schema: Schema, path: str) -> list[Cause]:
    """``kapi.cel.rules.compile_rules``: the rules of a CRD schema checked."""
    from kapi.cel.rules import compile_rules as check

    return check(schema, path)


def resolve(schema: Schema) -> Schema:
    """Follow a built-in ``$ref`` (possibly wrapped in ``allOf``) to its definition."""
    seen = 0
    while isinstance(schema, dict) and seen < 8:
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFS):
            schema = definitions()[ref[len(_DEFS) :]]
        elif isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
            schema = schema["allOf"][0]
        else:
            break
        seen += 1
    return schema


_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def prune(
    obj: Any, schema: Schema, crd: bool, path: str = "", root: bool = True
) -> list[str]:
    """Remove unknown fields from ``obj`` in place; returns their paths. MUTATES ``obj``."""
    unknown: list[str] = []
    _prune(obj, schema, crd, path, unknown, root)
    return unknown


def _prune(
    obj: Any, schema: Schema, crd: bool, path: str, unknown: list[str], root: bool
) -> None:
    schema = resolve(schema)
    if not isinstance(schema, dict):
        return
    if isinstance(obj, dict):
        if root or schema.get("x-kubernetes-embedded-resource"):
            meta = obj.get("metadata")
            if isinstance(meta, dict):
                _prune(
                    meta,
                    definitions()[_OBJECT_META],
                    False,
                    _join(path, "metadata"),
                    unknown,
                    False,
                )
        if (
            schema.get("x-kubernetes-preserve-unknown-fields")
            and "properties" not in schema
        ):
            return
        props = schema.get("properties")
        additional = schema.get("additionalProperties")
        if props is None and additional is None:
            if crd and not schema.get("x-kubernetes-preserve-unknown-fields"):
                for key in list(obj):
                    unknown.append(_join(path, key))
                    del obj[key]
            return
        keep_meta = root or schema.get("x-kubernetes-embedded-resource")
        for key in list(obj):
            if keep_meta and key in ("apiVersion", "kind", "metadata"):
                continue
            sub = (props or {}).get(key)
            if sub is None and isinstance(additional, dict):
                sub = additional
            if sub is None:
                if additional is True or schema.get(
                    "x-kubernetes-preserve-unknown-fields"
                ):
                    continue
                unknown.append(_join(path, key))
                del obj[key]
                continue
            child = obj[key]
            if isinstance(child, (dict, list)):  # nothing to prune in a scalar
                _prune(child, sub, crd, _join(path, key), unknown, False)
    elif isinstance(obj, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for index, item in enumerate(obj):
                if isinstance(item, (dict, list)):
                    _prune(item, items, crd, f"{path}[{index}]", unknown, False)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def apply_defaults(obj: Any, schema: Schema) -> None:
    """Fill ``default:`` values into missing fields of ``obj``. MUTATES ``obj``."""
    if not isinstance(schema, dict):
        return
    if isinstance(obj, dict):
        props = schema.get("properties") or {}
        for key, sub in props.items():
            if key not in obj and isinstance(sub, dict) and "default" in sub:
                obj[key] = copy.deepcopy(sub["default"])
        for key, value in obj.items():
            sub = props.get(key)
            if sub is None and isinstance(schema.get("additionalProperties"), dict):
                sub = schema["additionalProperties"]
            if sub is not None:
                apply_defaults(value, sub)
    elif isinstance(obj, list) and isinstance(schema.get("items"), dict):
        for item in obj:
            apply_defaults(item, schema["items"])


# -- structural check --------------------------------------------------------------

_FORBIDDEN = (
    "$ref",
    "definitions",
    "dependencies",
    "additionalItems",
    "patternProperties",
    "id",
    "$schema",
)


def structural_causes(schema: Any, path: str) -> list[Cause]:
    """Why a CRD's ``openAPIV3Schema`` is not structural (kube's wording)."""
    causes: list[Cause] = []
    if not isinstance(schema, dict):
        return [
            Cause("FieldValueRequired", "Required value: schemas are required", path)
        ]
    if schema.get("type") != "object":
        causes.append(
            Cause(
                "FieldValueInvalid",
                f'Invalid value: "{schema.get("type", "")}": must be object at the root',
                f"{path}.type",
            )
        )
    _structural(schema, path, causes, root=True)
    return causes


def _structural(node: dict, path: str, causes: list[Cause], root: bool = False) -> None:
    for key in _FORBIDDEN:
        if key in node:
            causes.append(
                Cause(
                    "FieldValueForbidden",
                    f"Forbidden: {key} is not supported",
                    f"{path}.{key}",
                )
            )
    exempt = node.get("x-kubernetes-int-or-string") or node.get(
        "x-kubernetes-preserve-unknown-fields"
    )
    if not node.get("type") and not exempt:
        causes.append(
            Cause(
                "FieldValueRequired",
                "Required value: must not be empty for specified object fields",
                f"{path}.type",
            )
        )
    if (
        "properties" in node
        and isinstance(node.get("additionalProperties"), (dict, bool))
        and node["additionalProperties"] is not False
    ):
        causes.append(
            Cause(
                "FieldValueForbidden",
                "Forbidden: additionalProperties and properties are mutual exclusive",
                f"{path}.additionalProperties",
            )
        )
    if node.get("type") == "array" and not isinstance(node.get("items"), dict):
        causes.append(
            Cause(
                "FieldValueRequired",
                "Required value: must be specified",
                f"{path}.items",
            )
        )
    causes += _list_type_schema_causes(node, path)
    for key, sub in (node.get("properties") or {}).items():
        if isinstance(sub, dict):
            if root and key == "metadata":
                extra = set(sub.get("properties") or {}) - {"name", "generateName"}
                if extra:
                    causes.append(
                        Cause(
                            "FieldValueForbidden",
                            "Forbidden: must not specify anything other than name and generateName",
                            f"{path}.properties[metadata]",
                        )
                    )
                continue
            _structural(sub, f"{path}.properties[{key}]", causes)
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            _structural(node[key], f"{path}.{key}", causes)
    for key in ("allOf", "anyOf", "oneOf"):
        for index, sub in enumerate(node.get(key) or ()):
            if isinstance(sub, dict) and sub.get("default") is not None:
                causes.append(
                    Cause(
                        "FieldValueForbidden",
                        "Forbidden: must not be set inside logical junctors",
                        f"{path}.{key}[{index}].default",
                    )
                )


def _list_type_schema_causes(node: dict, path: str) -> list[Cause]:
    """``x-kubernetes-list-type``/``list-map-keys`` used as apiextensions allows."""
    causes: list[Cause] = []
    list_type = node.get("x-kubernetes-list-type")
    keys = node.get("x-kubernetes-list-map-keys") or []
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        causes.append(
            Cause(
                "FieldValueNotSupported",
                f'Unsupported value: "{list_type}": supported values: "atomic", "set", "map"',
                f"{path}.x-kubernetes-list-type",
            )
        )
    if list_type is not None and node.get("type") != "array":
        causes.append(
            Cause(
                "FieldValueInvalid",
                f'Invalid value: "{node.get("type", "")}": must be array if x-kubernetes-list-type is specified',
                f"{path}.type",
            )
        )
    if keys and list_type != "map":
        causes.append(
            Cause(
                "FieldValueRequired" if list_type is None else "FieldValueInvalid",
                (
                    "Required value"
                    if list_type is None
                    else f'Invalid value: "{list_type}"'
                )
                + ": must be map if x-kubernetes-list-map-keys is non-empty",
                f"{path}.x-kubernetes-list-type",
            )
        )
    if list_type == "map":
        items = node.get("items") if isinstance(node.get("items"), dict) else {}
        if not keys:
            causes.append(
                Cause(
                    "FieldValueRequired",
                    "Required value: must not be empty if x-kubernetes-list-type is map",
                    f"{path}.x-kubernetes-list-map-keys",
                )
            )
        if items and items.get("type") != "object":
            causes.append(
                Cause(
                    "FieldValueInvalid",
                    f'Invalid value: "{items.get("type", "")}": must be object if parent array\'s x-kubernetes-list-type is map',
                    f"{path}.items.type",
                )
            )
        elif items:
            props = items.get("properties") or {}
            for key in keys:
                if key not in props:
                    causes.append(
                        Cause(
                            "FieldValueRequired",
                            "Required value: entries in x-kubernetes-list-map-keys must correspond to properties",
                            f"{path}.items.properties[{key}]",
                        )
                    )
    return causes
