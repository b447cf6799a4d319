"""Set operations on objects by their schema (structured-merge-diff's ``typed``).

* ``field_set`` — the leaf fields an object sets (SMD ``ToFieldSet``);
* ``compare`` — what changed between two objects: added, modified, removed;
* ``merge`` — an applied configuration merged into a live object;
* ``remove`` — an object without the fields of a set;
* ``named_fields_as_members`` — struct fields on the way to a member become members
  (SMD ``EnsureNamedFieldsAreMembers``), so pruning can drop whole structs.

Without a schema, lists are atomic and maps granular.
"""

from __future__ import annotations

from typing import Any

from kapi.fieldmanager.fieldpath import FieldSet, Path, item_element
from kapi.schema import TypeSchema

__all__ = ["compare", "field_set", "merge", "named_fields_as_members", "remove"]


def _child(schema: TypeSchema | None, key: str) -> TypeSchema | None:
    return schema.field(key) if schema is not None else None


def _is_named(schema: TypeSchema | None, key: str) -> bool:
    return schema is not None and schema.has_field(key)


def _atomic_map(schema: TypeSchema | None) -> bool:
    return schema is not None and schema.map_type == "atomic"


def _associative(schema: TypeSchema | None) -> bool:
    return schema is not None and schema.list_type in ("map", "set")


def _items(value: list, schema: TypeSchema | None) -> list[tuple[str, Any]]:
    return [(item_element(v, schema, i), v) for i, v in enumerate(value)]


# -- field sets --------------------------------------------------------------------
def field_set(obj: Any, schema: TypeSchema | None, prefix: Path = ()) -> FieldSet:
    out: FieldSet = set()
    _walk(obj, schema, prefix, out)
    return out


def _walk(value: Any, schema: TypeSchema | None, path: Path, out: FieldSet) -> None:
    if isinstance(value, dict):
        if _atomic_map(schema):
            out.add(path)
            return
        for key, child in value.items():
            child_path = path + ("f:" + key,)
            child_schema = _child(schema, key)
            _walk(child, child_schema, child_path, out)
            if (
                child is None
                or (isinstance(child, dict) and not child)
                or not _is_named(schema, key)
            ):
                out.add(child_path)
    elif isinstance(value, list):
        if not _associative(schema):
            out.add(path)
            return
        items = schema.items() if schema is not None else None
        seen: set[str] = set()
        for element, item in _items(value, schema):
            if element in seen:
                continue
            seen.add(element)
            out.add(path + (element,))
            _walk(item, items, path + (element,), out)
    else:
        out.add(path)


# -- compare -----------------------------------------------------------------------
_MISSING = object()


def compare(
    old: Any, new: Any, schema: TypeSchema | None
) -> tuple[FieldSet, FieldSet, FieldSet]:
    """(added, modified, removed) from ``old`` to ``new`` (SMD ``Compare``): changed
    leaves, plus every node that appears or disappears as a whole."""
    added: FieldSet = set()
    modified: FieldSet = set()
    removed: FieldSet = set()
    _compare(old, new, schema, (), added, modified, removed)
    return added, modified, removed


def _compare(
    old: Any,
    new: Any,
    schema: TypeSchema | None,
    path: Path,
    added: FieldSet,
    modified: FieldSet,
    removed: FieldSet,
) -> None:
    if old is _MISSING:
        added.update(field_set(new, schema, path))
        if path:
            added.add(path)
        return
    if new is _MISSING:
        removed.update(field_set(old, schema, path))
        if path:
            removed.add(path)
        return
    if (
        isinstance(old, dict)
        and isinstance(new, dict)
        and not _atomic_map(schema)
        and (old or new)
    ):
        for key in old.keys() | new.keys():
            o, n = old.get(key, _MISSING), new.get(key, _MISSING)
            if o is _MISSING or n is _MISSING or o != n:
                _compare(
                    o,
                    n,
                    _child(schema, key),
                    path + ("f:" + key,),
                    added,
                    modified,
                    removed,
                )
        return
    if (
        isinstance(old, list)
        and isinstance(new, list)
        and _associative(schema)
        and (old or new)
    ):
        items = schema.items()
        olds = dict(reversed(_items(old, schema)))
        news = dict(reversed(_items(new, schema)))
        for element in olds.keys() | news.keys():
            o, n = olds.get(element, _MISSING), news.get(element, _MISSING)
            if o is _MISSING or n is _MISSING or o != n:
                _compare(o, n, items, path + (element,), added, modified, removed)
        return
    if old != new or type(old) is not type(new):
        modified.add(path)


# -- merge -------------------------------------------------------------------------
def merge(live: Any, config: Any, schema: TypeSchema | None) -> Any:
    """``config`` merged into ``live``: config wins on leaves and atomic values."""
    if isinstance(live, dict) and isinstance(config, dict) and not _atomic_map(schema):
        out = dict(live)
        for key, value in config.items():
            out[key] = (
                merge(live[key], value, _child(schema, key)) if key in live else value
            )
        return out
    if isinstance(live, list) and isinstance(config, list) and _associative(schema):
        return _merge_list(live, config, schema)
    return config


def _merge_list(live: list, config: list, schema: TypeSchema) -> list:
    items = schema.items()
    lhs = _items(live, schema)
    rhs = _items(config, schema)
    lhs_map = dict(lhs)
    rhs_keys = {e for e, _ in rhs}
    out: list = []
    emitted: set[str] = set()
    li = ri = 0
    while li < len(lhs) or ri < len(rhs):
        if li < len(lhs):
            element, item = lhs[li]
            if element not in rhs_keys:
                out.append(item)
                li += 1
                continue
            if element in emitted:
                li += 1
                continue
        if ri < len(rhs):
            element, item = rhs[ri]
            ri += 1
            if element in emitted:
                continue
            emitted.add(element)
            out.append(
                merge(lhs_map[element], item, items) if element in lhs_map else item
            )
    return out


# -- remove ------------------------------------------------------------------------
def _trie(fields: FieldSet) -> dict:
    root: dict = {}
    for path in fields:
        node = root
        for element in path:
            node = node.setdefault(element, {})
        node[None] = True
    return root


def remove(obj: Any, fields: FieldSet, schema: TypeSchema | None) -> Any:
    """A copy of ``obj`` without the members of ``fields`` (SMD ``RemoveItems``);
    maps and lists left empty by the removal are dropped."""
    out = _remove(obj, _trie(fields), schema)
    return {} if out is None and isinstance(obj, dict) else out


def _remove(value: Any, trie: dict, schema: TypeSchema | None) -> Any:
    if isinstance(value, dict):
        if not value or _atomic_map(schema):
            return value
        out = {}
        for key, child in value.items():
            sub = trie.get("f:" + key)
            if sub is None:
                out[key] = child
            elif sub.get(None):
                continue
            else:
                out[key] = _remove(child, sub, _child(schema, key))
                if out[key] is None and child is not None:
                    del out[key]
        return out or None
    if isinstance(value, list):
        if not value or not _associative(schema):
            return value
        items = schema.items()
        kept = []
        for element, item in _items(value, schema):
            sub = trie.get(element)
            if sub is None:
                kept.append(item)
            elif not sub.get(None):
                kept.append(_remove(item, sub, items))
        return kept or None
    return value


def named_fields_as_members(fields: FieldSet, schema: TypeSchema | None) -> FieldSet:
    out = set(fields)
    for path in fields:
        node = schema
        for depth, element in enumerate(path[:-1]):
            if element.startswith("f:"):
                name = element[2:]
                if _is_named(node, name):
                    out.add(path[: depth + 1])
                node = _child(node, name)
            else:
                node = node.items() if node is not None else None
    return out
