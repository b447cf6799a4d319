"""Who owns which field: the ``managedFields`` of an object as a tree.

Each entry's ``fieldsV1`` is a set of paths (``f:<field>``, ``k:<json key of a
list item>``, ``v:<json value>``, ``i:<index>``; ``.`` marks the node itself).
:func:`owner_tree` merges them into one tree whose nodes list the managers that
own them, which :mod:`kapi.admin.yamlview` walks next to the object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import orjson

__all__ = ["OwnerNode", "manager_label", "owner_tree"]


@dataclass
class OwnerNode:
    managers: list[str] = field(default_factory=list)
    #: Managers that own the whole subtree (a leaf in their fieldsV1).
    whole: list[str] = field(default_factory=list)
    children: dict[str, OwnerNode] = field(default_factory=dict)

    def child(self, key: str) -> OwnerNode | None:
        return self.children.get(key)

    def item(self, value: Any, index: int) -> OwnerNode | None:
        """The child for a list item: by its key fields, its value, or its index."""
        if isinstance(value, dict):
            for key, node in self.children.items():
                if not key.startswith("k:"):
                    continue
                try:
                    wanted = orjson.loads(key[2:])
                except orjson.JSONDecodeError:
                    continue
                if isinstance(wanted, dict) and all(value.get(k) == v for k, v in wanted.items()):
                    return node
        else:
            node = self.children.get("v:" + orjson.dumps(value).decode())
            if node is not None:
                return node
        return self.children.get(f"i:{index}")


def manager_label(entry: dict) -> str:
    """``manager`` plus the operation, and the subresource when there is one."""
    label = f"{entry.get('manager', '?')} ({entry.get('operation', '?')}"
    if entry.get("subresource"):
        label += f", /{entry['subresource']}"
    return label + ")"


def owner_tree(managed_fields: list[dict] | None) -> OwnerNode:
    root = OwnerNode()
    for entry in managed_fields or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("fieldsV1"), dict):
            continue
        _merge(root, entry["fieldsV1"], manager_label(entry))
    return root


def _merge(node: OwnerNode, fields: dict, manager: str) -> None:
    for key, sub in fields.items():
        if key == ".":
            node.managers.append(manager)
            continue
        child = node.children.setdefault(key, OwnerNode())
        if isinstance(sub, dict) and sub:
            _merge(child, sub, manager)
        else:
            # A leaf: the manager owns this field and everything below it.
            child.managers.append(manager)
            child.whole.append(manager)
