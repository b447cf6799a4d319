"""Desired against live: the objects a revision renders, beside the stored ones.

:func:`rendered` renders a Sync's ``spec.path`` at a commit as the sync does
(``sync.stages.load_objects``: the shared checkout, kustomize, ignore rules)
and plans it (``sync.apply.plan``: namespaces, the Sync's labels), cached per
(repository, commit, rendering fields). SOPS-encrypted values stay encrypted
and postBuild variables unsubstituted: the page never decrypts.

:func:`compare` walks the desired object and the live one side by side, field
by field (list items matched by ``name`` when they have one), and classes
each line:

``same``      the live value is the desired one;
``drifted``   the live value differs (another writer changed it);
``missing``   desired, absent from the live object;
``other``     only in the live object, owned by another field manager
              (from ``managedFields``: a controller, ``kubectl edit``, an HPA);
``default``   only in the live object, owned by no manager: the server's
              defaulting filled it in.

Server-kept metadata (uid, resourceVersion, managedFields...) and ``status``
are left out of the live side.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import yaml

from kapi.admin.managed_fields import OwnerNode, owner_tree

__all__ = ["FieldLine", "ObjectDiff", "compare", "rendered"]

SYNC_MANAGER = "kapi-sync"
_SYSTEM_META = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields",
                "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds")
_CACHE: OrderedDict[tuple, dict] = OrderedDict()
_CACHE_LOCK = threading.Lock()
_CACHE_SIZE = 32


def rendered(sync: dict, repo: dict, sha: str) -> dict[str, Any]:
    """The planned entries (``sync.apply.Entry``) of ``sha`` by inventory id.
    Raises ``sync.render.RenderError``, ``sync.gitstore.GitError``, ``OSError``."""
    from sync import apply as engine
    from sync.stages import load_objects

    spec = sync.get("spec") or {}
    meta = sync["metadata"]
    key = (repo["metadata"].get("uid"), sha, meta.get("namespace"), meta.get("name"),
           yaml.safe_dump({k: spec.get(k) for k in ("path", "targetNamespace", "driftIgnoreRules")}),
           str((repo.get("spec") or {}).get("ignore")))
    with _CACHE_LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    objects = load_objects(repo, sha, spec)
    entries, _problems = engine.plan(objects, meta["namespace"], meta["name"],
                                     spec.get("targetNamespace") or "", spec.get("driftIgnoreRules"))
    out = {e.id: e for e in entries}
    with _CACHE_LOCK:
        _CACHE[key] = out
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return out


@dataclass
class FieldLine:
    text: str
    css: str = ""
    owners: list[str] = field(default_factory=list)


@dataclass
class ObjectDiff:
    desired: list[FieldLine]
    live: list[FieldLine]
    counts: dict[str, int]

    @property
    def differs(self) -> bool:
        return bool(self.counts.get("drifted") or self.counts.get("missing"))


def _live_shown(live: dict) -> dict:
    meta = {k: v for k, v in (live.get("metadata") or {}).items() if k not in _SYSTEM_META}
    return {**{k: v for k, v in live.items() if k != "status"}, "metadata": meta}


def _scalar(value: Any) -> str:
    out = yaml.safe_dump(value, default_flow_style=True, width=2**31, allow_unicode=True)
    return out[:-5] if out.endswith("\n...\n") else out.rstrip("\n")


def _item_key(item: Any, index: int) -> Any:
    if isinstance(item, dict) and isinstance(item.get("name"), str):
        return ("name", item["name"])
    return ("i", index)


def _find(items: list | None, key: Any) -> Any:
    if not isinstance(items, list):
        return _MISSING
    for index, item in enumerate(items):
        if _item_key(item, index) == key:
            return item
    return _MISSING


_MISSING = object()


def _lines(value: Any, other: Any, owners: OwnerNode | None, indent: int, prefix: str,
           out: list[FieldLine], live_side: bool) -> None:
    """Write ``prefix`` + ``value`` as YAML lines classed against ``other``
    (the other side's value at the same place, ``_MISSING`` if none)."""
    if isinstance(value, dict) and value:
        out.append(FieldLine(prefix, _class(value, other, owners, live_side, container=True)))
        for key, sub in value.items():
            child = owners.child(f"f:{key}") if owners else None
            there = other.get(key, _MISSING) if isinstance(other, dict) else _MISSING
            _lines(sub, there, child, indent + 2, " " * (indent + 2) + _scalar(key) + ":", out, live_side)
        return
    if isinstance(value, list) and value:
        out.append(FieldLine(prefix, _class(value, other, owners, live_side, container=True)))
        for index, item in enumerate(value):
            child = owners.item(item, index) if owners else None
            there = _find(other if isinstance(other, list) else None, _item_key(item, index))
            start = len(out)
            _lines(item, there, child, indent + 2, " " * (indent + 2) + "-", out, live_side)
            if isinstance(item, dict) and item and len(out) > start + 1:
                # "- key: value" on the dash line, as YAML prints a list of mappings.
                first, second = out[start], out[start + 1]
                second.text = " " * (indent + 2) + "- " + second.text.lstrip()
                del out[start]
                second.css = second.css or first.css
        return
    line = FieldLine(f"{prefix} {_scalar(value)}", _class(value, other, owners, live_side))
    line.owners = [m for m in (owners.managers if owners else [])]
    out.append(line)


def _managers(owners: OwnerNode | None) -> list[str]:
    return [m.split(" (", 1)[0] for m in (owners.managers if owners else [])]


def _class(value: Any, other: Any, owners: OwnerNode | None, live_side: bool, container: bool = False) -> str:
    if other is _MISSING:
        if not live_side:
            return "missing"
        managers = [m for m in _managers(owners) if m != SYNC_MANAGER]
        if managers:
            return "other"
        return "" if container else "default"
    if container:
        return ""
    return "same" if value == other else "drifted"


def compare(desired: dict | None, live: dict | None) -> ObjectDiff:
    """Both sides as classed YAML lines (either may be None: not rendered / not stored)."""
    tree = owner_tree((live or {}).get("metadata", {}).get("managedFields")) if live else None
    shown = _live_shown(live) if live else None
    left: list[FieldLine] = []
    right: list[FieldLine] = []
    if desired is not None:
        for key, value in desired.items():
            there = shown.get(key, _MISSING) if shown is not None else _MISSING
            _lines(value, there, None, 0, _scalar(key) + ":", left, False)
    if shown is not None:
        for key, value in shown.items():
            there = desired.get(key, _MISSING) if desired is not None else _MISSING
            child = tree.child(f"f:{key}") if tree else None
            _lines(value, there, child, 0, _scalar(key) + ":", right, True)
    counts: dict[str, int] = {}
    for line in left + right:
        if line.css:
            counts[line.css] = counts.get(line.css, 0) + 1
    # A drifted value counts once, not once per side.
    if "drifted" in counts:
        counts["drifted"] //= 2
    return ObjectDiff(left, right, counts)
