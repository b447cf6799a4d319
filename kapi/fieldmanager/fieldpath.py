"""Field paths and sets, and their FieldsV1 encoding.

A path is a tuple of FieldsV1 keys: ``f:<name>`` (struct field or map key),
``k:<json of key fields>`` (item of a map-type list), ``v:<json>`` (item of a
set-type list) and ``i:<index>``. A field set is a Python ``set`` of paths, so
union, difference and intersection come for free. FieldsV1 is the trie of a set,
with ``.`` marking a node that is a member and also has children.
"""

from __future__ import annotations

import json
from typing import Any

from kapi.schema import TypeSchema

__all__ = [
    "FieldSet",
    "Path",
    "from_fields_v1",
    "item_element",
    "path_string",
    "to_fields_v1",
]

Path = tuple[str, ...]
FieldSet = set[Path]


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def item_element(item: Any, list_schema: TypeSchema | None, index: int) -> str:
    """The path element of a list item: ``k:`` for map lists, ``v:`` for sets.

    A map-list item that omits a key field takes the field's schema default (SMD's
    ``keyedAssociativeListItemToPathElement``): ``{port: 80}`` of Service ports is
    ``k:{"port":80,"protocol":"TCP"}``, the same item as the stored, defaulted one.
    """
    if list_schema is not None:
        keys = list_schema.list_map_keys
        if list_schema.list_type == "map" and keys and isinstance(item, dict):
            return "k:" + _json(_key_fields(item, keys, list_schema))
        if list_schema.list_type == "set":
            return "v:" + _json(item)
    return f"i:{index}"


def _key_fields(item: dict, keys: list[str], list_schema: TypeSchema) -> dict:
    out = {}
    items = list_schema.items()
    for key in keys:
        if key in item:
            out[key] = item[key]
            continue
        field = items.field(key) if items is not None else None
        default = field.node.get("default") if field is not None else None
        if default is not None:
            out[key] = default
    return out


def to_fields_v1(fields: FieldSet) -> dict:
    """The FieldsV1 trie of a set: ``.`` first, then children in sorted order."""
    trie: dict = {}
    for path in fields:
        node = trie
        for element in path:
            node = node.setdefault(element, {})
        node[None] = True
    return _encode(trie)


def _encode(node: dict) -> dict:
    out: dict = {}
    if None in node:
        if len(node) == 1:
            return out
        out["."] = {}
        keys = sorted(k for k in node if k is not None)
    else:
        keys = sorted(node)
    for key in keys:
        out[key] = _encode(node[key])
    return out


def from_fields_v1(trie: dict, prefix: Path = ()) -> FieldSet:
    out: FieldSet = set()
    for key, child in (trie or {}).items():
        if key == ".":
            if prefix:
                out.add(prefix)
            continue
        path = prefix + (key,)
        if not child:
            out.add(path)
        else:
            out |= from_fields_v1(child, path)
    return out


def path_string(path: Path) -> str:
    """SMD's ``Path.String()``: ``.data.key``, ``.spec.ports[port=80,protocol="TCP"]``."""
    out = []
    for element in path:
        kind, rest = element[:2], element[2:]
        if kind == "f:":
            out.append("." + rest)
        elif kind == "k:":
            keys = json.loads(rest)
            out.append("[" + ",".join(f"{k}={_json(v)}" for k, v in keys.items()) + "]")
        elif kind == "v:":
            out.append(f"[={rest}]")
        else:
            out.append(f"[{rest}]")
    return "".join(out)
