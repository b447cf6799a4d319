"""``TypeSchema``: one node of a JSON schema with the ``x-kubernetes-*`` extensions.

The engines ask it, for a place in an object, what the value is (struct, map,
list or scalar), how lists merge (``x-kubernetes-list-type``, ``-list-map-keys``,
``-patch-merge-key``, ``-patch-strategy``), whether a map is atomic
(``x-kubernetes-map-type``), and which fields it does not know. ``$ref``s are
resolved lazily against the document's ``$defs`` (or ``definitions``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["TypeSchema"]

Node = dict[str, Any]
_TYPE_AND_OBJECT_META = frozenset({"apiVersion", "kind", "metadata"})


def _types(node: Node) -> set[str]:
    t = node.get("type")
    if t is None:
        return set()
    return {t} if isinstance(t, str) else set(t)


class TypeSchema:
    """A schema node plus the definitions its ``$ref``s point into."""

    __slots__ = ("_children", "defs", "node")

    def __init__(self, node: Node, defs: dict[str, Node] | None = None) -> None:
        self.defs = defs or {}
        self.node = self._resolve(node)
        self._children: dict[str, TypeSchema | None] = {}

    def _resolve(self, node: Node) -> Node:
        seen = 0
        while isinstance(node, dict) and "$ref" in node and seen < 64:
            ref = node["$ref"].rsplit("/", 1)[-1]
            extra = {k: v for k, v in node.items() if k not in ("$ref", "description")}
            node = {**self.defs.get(ref, {}), **extra}
            seen += 1
        if isinstance(node, dict) and "allOf" in node and len(node["allOf"]) == 1:
            extra = {k: v for k, v in node.items() if k != "allOf"}
            node = {**self._resolve(node["allOf"][0]), **extra}
        return node if isinstance(node, dict) else {}

    def _child(self, key: str, node: Node | None) -> TypeSchema | None:
        if key not in self._children:
            self._children[key] = None if node is None else TypeSchema(node, self.defs)
        return self._children[key]

    # -- what the value is ---------------------------------------------------
    @property
    def preserves_unknown(self) -> bool:
        return bool(self.node.get("x-kubernetes-preserve-unknown-fields"))

    @property
    def is_struct(self) -> bool:
        """An object with named fields (kube's struct types)."""
        return "properties" in self.node

    @property
    def is_map(self) -> bool:
        """An object of arbitrary keys (``additionalProperties``)."""
        return "properties" not in self.node and (
            "additionalProperties" in self.node or "object" in _types(self.node)
        )

    @property
    def is_list(self) -> bool:
        return "items" in self.node or "array" in _types(self.node)

    @property
    def is_int_or_string(self) -> bool:
        return bool(self.node.get("x-kubernetes-int-or-string"))

    # -- children -------------------------------------------------------------
    def field(self, name: str) -> TypeSchema | None:
        """The schema of struct field ``name`` or of any value of a map."""
        props = self.node.get("properties")
        if props is not None and name in props:
            return self._child("f:" + name, props[name])
        extra = self.node.get("additionalProperties")
        if isinstance(extra, dict):
            return self._child("*", extra)
        return None

    def has_field(self, name: str) -> bool:
        return name in (self.node.get("properties") or {})

    def items(self) -> TypeSchema | None:
        items = self.node.get("items")
        return self._child("[]", items) if isinstance(items, dict) else None

    # -- merge behaviour ----------------------------------------------------------
    @property
    def list_type(self) -> str:
        """``atomic``, ``set`` or ``map``; lists without the extension are atomic."""
        return self.node.get("x-kubernetes-list-type") or "atomic"

    @property
    def list_map_keys(self) -> list[str]:
        return list(self.node.get("x-kubernetes-list-map-keys") or [])

    @property
    def map_type(self) -> str:
        """``granular`` or ``atomic`` (``x-kubernetes-map-type``)."""
        return self.node.get("x-kubernetes-map-type") or "granular"

    @property
    def patch_merge_key(self) -> str | None:
        return self.node.get("x-kubernetes-patch-merge-key")

    @property
    def patch_strategies(self) -> set[str]:
        raw = self.node.get("x-kubernetes-patch-strategy") or ""
        return {s for s in raw.split(",") if s}

    # -- validation --------------------------------------------------------------
    def unknown_fields(
        self, obj: Any, prefix: str = "", prune: bool = False
    ) -> list[str]:
        """Dotted paths of fields in ``obj`` the schema does not declare
        (kube's ``unknown field "spec.foo"``); list items appear as ``[i]``.
        With ``prune`` they are also removed from ``obj`` (which is mutated)."""
        out: list[str] = []
        self._unknown(obj, prefix, out, prune)
        return out

    def _unknown(self, obj: Any, prefix: str, out: list[str], prune: bool) -> None:
        if self.preserves_unknown:
            # Unknown keys are kept here, but a declared field has its schema
            # (kube prunes and checks inside it all the same).
            if isinstance(obj, dict) and self.is_struct:
                props = self.node["properties"]
                for key, value in obj.items():
                    if key in props and isinstance(value, (dict, list)):
                        child = self.field(key)
                        if child is not None:
                            path = f"{prefix}.{key}" if prefix else key
                            child._unknown(value, path, out, prune)
            return
        if isinstance(obj, dict):
            if self.is_struct:
                props = self.node["properties"]
                embedded = self.node.get("x-kubernetes-embedded-resource")
                for key, value in list(obj.items()):
                    if key in props and not isinstance(value, (dict, list)):
                        continue  # a declared scalar: nothing in it to be unknown
                    if embedded and key in _TYPE_AND_OBJECT_META and key not in props:
                        continue  # an embedded object's own, declared or not
                    path = f"{prefix}.{key}" if prefix else key
                    child = self.field(key)
                    if child is None:
                        out.append(path)
                        if prune:
                            del obj[key]
                    elif isinstance(value, (dict, list)):
                        child._unknown(value, path, out, prune)
            elif self.is_map:
                child = self.field("")
                if child is not None:
                    for key, value in obj.items():
                        if isinstance(value, (dict, list)):
                            child._unknown(
                                value, f"{prefix}.{key}" if prefix else key, out, prune
                            )
        elif isinstance(obj, list):
            child = self.items()
            if child is not None:
                for i, value in enumerate(obj):
                    if isinstance(value, (dict, list)):
                        child._unknown(value, f"{prefix}[{i}]", out, prune)
