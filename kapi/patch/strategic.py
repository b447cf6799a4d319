"""Strategic merge patch (``application/strategic-merge-patch+json``).

kube's ``pkg/util/strategicpatch`` semantics on plain dicts, driven by the type
schema's ``x-kubernetes-patch-merge-key`` / ``x-kubernetes-patch-strategy``:

* maps merge key by key, ``null`` deletes a key;
* lists whose strategy is ``merge`` merge by the merge key (lists of objects) or
  as a union (lists of primitives); other lists are replaced;
* directives: ``$patch: replace|delete|merge`` (in a map or as a list element),
  ``$retainKeys``, ``$setElementOrder/<field>``, ``$deleteFromPrimitiveList/<field>``.
"""

from __future__ import annotations

import copy
from typing import Any

from kapi.patch.errors import BadPatch
from kapi.schema import TypeSchema

__all__ = ["strategic_merge_patch"]

_PATCH = "$patch"
_RETAIN_KEYS = "$retainKeys"
_SET_ORDER = "$setElementOrder/"
_DELETE_PRIMITIVE = "$deleteFromPrimitiveList/"


def strategic_merge_patch(original: Any, patch: Any, schema: TypeSchema | None) -> Any:
    """A new object: ``patch`` applied to ``original`` (neither is mutated)."""
    if not isinstance(patch, dict):
        raise BadPatch("strategic merge patch must be a JSON object")
    result = _merge_map(
        copy.deepcopy(original) if isinstance(original, dict) else {}, patch, schema
    )
    return {} if result is None else result


def _merge_map(original: dict, patch: dict, schema: TypeSchema | None) -> dict | None:
    """Merges ``patch`` into ``original`` (mutated); ``None`` deletes the map."""
    directive = patch.get(_PATCH)
    if directive is not None:
        if directive == "replace":
            return _strip(patch)
        if directive == "delete":
            return None
        if directive != "merge":
            raise BadPatch(f"Unknown patch type: {directive} in map: {patch}")
    retain = patch.get(_RETAIN_KEYS)
    if retain is not None:
        if not isinstance(retain, list):
            raise BadPatch(f"invalid value for {_RETAIN_KEYS}: {retain!r}")
        for key in [k for k in original if k not in retain]:
            del original[key]
    orders: dict[str, list] = {}
    for key, value in patch.items():
        if key in (_PATCH, _RETAIN_KEYS):
            continue
        if key.startswith(_SET_ORDER):
            orders[key[len(_SET_ORDER) :]] = value
            continue
        if key.startswith(_DELETE_PRIMITIVE):
            field = key[len(_DELETE_PRIMITIVE) :]
            if isinstance(original.get(field), list):
                original[field] = [v for v in original[field] if v not in value]
            continue
        if value is None:
            original.pop(key, None)
            continue
        child = schema.field(key) if schema is not None else None
        current = original.get(key)
        strategies = child.patch_strategies if child is not None else set()
        if isinstance(value, dict) and "replace" not in strategies:
            merged = _merge_map(
                current if isinstance(current, dict) else {}, value, child
            )
            if merged is None:
                original.pop(key, None)
            else:
                original[key] = merged
        elif isinstance(value, list) and "merge" in strategies:
            original[key] = _merge_list(
                current if isinstance(current, list) else [], value, child
            )
        else:
            original[key] = _strip(value)
    for field, order in orders.items():
        if isinstance(original.get(field), list):
            child = schema.field(field) if schema is not None else None
            original[field] = _order(
                original[field], order, child.patch_merge_key if child else None
            )
    return original


def _merge_list(original: list, patch: list, schema: TypeSchema) -> list:
    merge_key = schema.patch_merge_key
    items = schema.items()
    if any(isinstance(p, dict) and p.get(_PATCH) == "replace" for p in patch):
        return [_strip(p) for p in patch if not (isinstance(p, dict) and _PATCH in p)]
    if not merge_key or not all(isinstance(p, dict) for p in patch):
        # A list of primitives merges as a union, in original order.
        out = list(original)
        for value in patch:
            if isinstance(value, dict) and value.get(_PATCH) == "delete":
                continue
            if value not in out:
                out.append(copy.deepcopy(value))
        return out
    out = list(original)
    for element in patch:
        if merge_key not in element:
            raise BadPatch(
                f"map: {element} does not contain declared merge key: {merge_key}"
            )
        index = next(
            (
                i
                for i, o in enumerate(out)
                if isinstance(o, dict) and o.get(merge_key) == element[merge_key]
            ),
            None,
        )
        directive = element.get(_PATCH)
        if directive == "delete":
            out = [
                o
                for o in out
                if not (isinstance(o, dict) and o.get(merge_key) == element[merge_key])
            ]
            continue
        if index is None:
            out.append(_strip(element))
        else:
            merged = _merge_map(out[index], element, items)
            if merged is None:
                del out[index]
            else:
                out[index] = merged
    return out


def _order(values: list, order: list, merge_key: str | None) -> list:
    """``$setElementOrder``: listed elements in the given order; others keep their
    place after them, in their original order."""

    def ident(v: Any) -> Any:
        return v.get(merge_key) if merge_key and isinstance(v, dict) else v

    if merge_key:
        order = [ident(o) if isinstance(o, dict) else o for o in order]
    rank = {repr(k): i for i, k in enumerate(order)}
    listed = sorted(
        (v for v in values if repr(ident(v)) in rank),
        key=lambda v: rank[repr(ident(v))],
    )
    others = [v for v in values if repr(ident(v)) not in rank]
    return listed + others


def _strip(value: Any) -> Any:
    """A copy of a patch value with every directive removed."""
    if isinstance(value, dict):
        return {
            k: _strip(v)
            for k, v in value.items()
            if k not in (_PATCH, _RETAIN_KEYS)
            and not k.startswith(_SET_ORDER)
            and not k.startswith(_DELETE_PRIMITIVE)
        }
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return copy.deepcopy(value)
