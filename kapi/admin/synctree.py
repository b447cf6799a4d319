"""A Sync's resource tree: the Sync, the objects it applied (its inventory),
and what they own by ownerReferences, recursively.

Read in a fixed number of statements per level, never one per node: the
inventory's objects by key in one (``gitopsreads.at_keys``), the objects
still labelled with the Sync in one (pruned or orphaned ones), then each
level of dependents in one on the owner-uid index (``gitopsreads.owned_by``).
Each node has its kind, name, health (kstatus rules, ``sync.health``) and
sync state:

``in-sync``   applied by the Sync and not changed by another manager since;
``drifted``   its content changed by another field manager after the Sync
              applied it (``drifted``; the Sync corrects it on its next pass);
``missing``   in the inventory but not stored (deleted behind its back);
``pruned``    labelled with the Sync, out of its inventory, being deleted;
``orphaned``  labelled with the Sync, out of its inventory, still there
              (objects a controller copied the labels to, which the Sync
              never applied, are not: a Service's Endpoints);
``owned``     not applied by the Sync: created by a controller for an owner.

Nodes the signed-in user may not ``get`` are left out (with their subtrees),
and so is anything past ``MAX_NODES``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kapi.storage import gitopsreads

__all__ = ["MAX_NODES", "Node", "Tree", "applied_by_sync", "build", "drifted", "flatten"]

MAX_NODES = 5000
SYNC_MANAGER = "kapi-sync"
_LABEL_NAME = "sync.kapi.dev/name"
_LABEL_NAMESPACE = "sync.kapi.dev/namespace"

Object = dict[str, Any]


@dataclass
class Node:
    kind: str
    namespace: str
    name: str
    state: str
    health: str = ""
    health_message: str = ""
    uid: str = ""
    rt: Any = None
    obj: Object | None = None
    children: list[Node] = field(default_factory=list)
    depth: int = 0
    url: str = ""


@dataclass
class Tree:
    roots: list[Node] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    total: int = 0
    truncated: bool = False
    hidden: int = 0


def applied_by_sync(meta: Object) -> bool:
    """Whether the Sync applied the object (``kapi-sync`` owns fields of it),
    rather than a controller copying the Sync's labels onto its own object."""
    return any(isinstance(e, dict) and e.get("manager") == SYNC_MANAGER
               for e in meta.get("managedFields") or [])


def drifted(meta: Object) -> bool:
    """Whether another field manager changed the object's content since the
    Sync applied it: a manager other than ``kapi-sync`` (not a status write)
    whose entry is as new as the Sync's and owns fields outside ``metadata``.
    Labels or annotations added by others (``kubectl label``, a controller's
    revision annotation) are not drift; the diff page compares values."""
    entries = [e for e in meta.get("managedFields") or [] if isinstance(e, dict)]
    ours = max((str(e.get("time") or "") for e in entries if e.get("manager") == SYNC_MANAGER), default="")
    return any(
        e.get("manager") != SYNC_MANAGER and e.get("subresource") != "status"
        and str(e.get("time") or "") >= ours
        and any(k != "f:metadata" for k in (e.get("fieldsV1") or {}))
        for e in entries
    )


def _health(obj: Object | None) -> tuple[str, str]:
    from sync.health import compute

    verdict = compute(obj)
    return verdict.status, verdict.message


def _inventory(sync: Object) -> list[tuple[str, str, str, str, str]]:
    from sync.apply import parse_id

    status = sync.get("status") if isinstance(sync.get("status"), dict) else {}
    inventory = status.get("inventory") if isinstance(status.get("inventory"), dict) else {}
    out = []
    for entry in inventory.get("entries") or []:
        try:
            out.append(parse_id(entry))
        except ValueError:
            continue
    return out


def build(sync: Object, may_get: Callable[[Any, str, str], bool]) -> Tree:
    """The tree of ``sync`` (served form); ``may_get(rt, namespace, name)``
    says whether the user may see a node."""
    from kapi.admin.views.common import stored_type
    from kapi.registry.catalog import catalog

    served = catalog()
    tree = Tree()
    applied: list[Node] = []
    keys: dict[tuple[str, str, str, str], Node] = {}
    for namespace, name, group, kind, version in _inventory(sync):
        rt = served.for_kind(group, version, kind)
        node = Node(kind, namespace, name, "missing", rt=rt)
        if rt is not None and not may_get(rt, namespace, name):
            tree.hidden += 1
            continue
        applied.append(node)
        if rt is not None:
            keys[(rt.stored_group, rt.stored_resource, namespace if rt.namespaced else "", name)] = node
    for stored in gitopsreads.at_keys(list(keys)):
        node = keys[(stored.group, stored.resource, stored.namespace, stored.name)]
        node.obj = node.rt.strategy.from_storage(stored.object, node.rt.version)
        meta = node.obj.get("metadata") or {}
        node.uid = str(meta.get("uid") or "")
        node.state = "drifted" if drifted(meta) else "in-sync"
    meta = sync.get("metadata") or {}
    labels = {_LABEL_NAMESPACE: meta.get("namespace", ""), _LABEL_NAME: meta.get("name", "")}
    known = {n.uid for n in applied if n.uid}
    for stored in gitopsreads.with_labels(labels):
        uid = str((stored.object.get("metadata") or {}).get("uid") or "")
        rt = stored_type(stored.group, stored.resource)
        if uid in known or rt is None or not applied_by_sync(stored.object.get("metadata") or {}):
            # Not the Sync's: a controller copied its labels (a Service's
            # Endpoints and EndpointSlices); owned ones appear under their owner.
            continue
        if not may_get(rt, stored.namespace, stored.name):
            continue
        obj = rt.strategy.from_storage(stored.object, rt.version)
        gone = bool((obj.get("metadata") or {}).get("deletionTimestamp"))
        applied.append(Node(rt.kind, stored.namespace, stored.name, "pruned" if gone else "orphaned",
                            uid=uid, rt=rt, obj=obj))
    tree.roots = applied
    seen = {n.uid for n in applied if n.uid}
    level = [n for n in applied if n.uid]
    count = len(applied)
    while level and count < MAX_NODES:
        parents = {n.uid: n for n in level}
        level = []
        for stored in gitopsreads.owned_by(list(parents), MAX_NODES - count + 1):
            meta = stored.object.get("metadata") or {}
            uid = str(meta.get("uid") or "")
            rt = stored_type(stored.group, stored.resource)
            if uid in seen or rt is None:
                continue
            seen.add(uid)
            if not may_get(rt, stored.namespace, stored.name):
                tree.hidden += 1
                continue
            if count >= MAX_NODES:
                tree.truncated = True
                break
            obj = rt.strategy.from_storage(stored.object, rt.version)
            node = Node(rt.kind, stored.namespace, stored.name, "owned", uid=uid, rt=rt, obj=obj)
            # Under its first owner of this level (a controller's is listed first by kube).
            refs = [r for r in meta.get("ownerReferences") or [] if isinstance(r, dict)]
            for ref in sorted(refs, key=lambda r: not r.get("controller")):
                parent = parents.get(str(ref.get("uid") or ""))
                if parent is not None:
                    parent.children.append(node)
                    break
            level.append(node)
            count += 1
    for node in flatten(tree.roots):
        node.health, node.health_message = _health(node.obj) if node.obj is not None else ("NotFound", "")
        tree.counts[node.state] = tree.counts.get(node.state, 0) + 1
    tree.total = count
    return tree


def flatten(roots: list[Node]) -> list[Node]:
    """Depth-first, each node with its ``depth`` set (0 for the applied ones)."""
    out: list[Node] = []
    stack = [(n, 0) for n in reversed(roots)]
    while stack:
        node, depth = stack.pop()
        node.depth = depth
        out.append(node)
        stack.extend((c, depth + 1) for c in reversed(node.children))
    return out
