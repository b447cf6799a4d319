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

__all__ = ["FieldLine", "ObjectDiff", "Row", "compare", "rendered"]

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


Row = tuple["FieldLine | None", "FieldLine | None"]


@dataclass
class ObjectDiff:
    #: Side by side, aligned: (desired line, live line), either None where
    #: that side has nothing at this place.
    rows: list[Row]
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
    if not isinstance(item, (dict, list)):
        return ("v", _scalar(item))
    return ("i", index)


_MISSING = object()


@dataclass
class _Owners:
    """Who owns a place in the live object: its node of the managedFields
    tree, and the managers owning a whole subtree above it."""

    node: OwnerNode | None
    inherited: tuple[str, ...] = ()

    def managers(self) -> list[str]:
        return list(self.inherited) + (self.node.managers if self.node else [])

    def _down(self, node: OwnerNode | None) -> _Owners:
        return _Owners(node, self.inherited + tuple(self.node.whole if self.node else ()))

    def child(self, key: str) -> _Owners:
        return self._down(self.node.child(f"f:{key}") if self.node else None)

    def item(self, value: Any, index: int) -> _Owners:
        return self._down(self.node.item(value, index) if self.node else None)


def _others(owners: _Owners) -> list[str]:
    return [m for m in owners.managers() if m.split(" (", 1)[0] != SYNC_MANAGER]


class _Writer:
    """Writes both sides of one object as aligned rows."""

    def __init__(self, live_stored: bool) -> None:
        self.rows: list[Row] = []
        self.live_stored = live_stored

    def one_side(self, value: Any, owners: _Owners | None, indent: int, prefix: str, left: bool) -> None:
        """``value`` on one side only (desired: missing; live: another
        manager's, or defaulted)."""
        if left:
            css, who = ("missing" if self.live_stored else ""), []
        else:
            who = _others(owners) if owners else []
            css = "other" if who else "default"
        container = isinstance(value, (dict, list)) and bool(value)
        line = FieldLine(prefix if container else f"{prefix} {_scalar(value)}", css, who)
        self.rows.append((line, None) if left else (None, line))
        if isinstance(value, dict) and value:
            for key, sub in value.items():
                self.one_side(sub, owners.child(key) if owners else None, indent + 2,
                              " " * (indent + 2) + _scalar(key) + ":", left)
        elif isinstance(value, list) and value:
            for index, item in enumerate(value):
                start = len(self.rows)
                self.one_side(item, owners.item(item, index) if owners else None, indent + 2,
                              " " * (indent + 2) + "-", left)
                self._dash(start, indent + 2)

    def both(self, want: Any, have: Any, owners: _Owners, indent: int, prefix: str) -> None:
        """One place in both objects: ``want`` (desired) and ``have`` (live),
        either ``_MISSING``."""
        if have is _MISSING:
            self.one_side(want, None, indent, prefix, True)
            return
        if want is _MISSING:
            self.one_side(have, owners, indent, prefix, False)
            return
        if isinstance(want, dict) and isinstance(have, dict) and want and have:
            self.rows.append((FieldLine(prefix), FieldLine(prefix)))
            for key in [*want, *(k for k in have if k not in want)]:
                self.both(want.get(key, _MISSING), have.get(key, _MISSING), owners.child(key),
                          indent + 2, " " * (indent + 2) + _scalar(key) + ":")
            return
        if isinstance(want, list) and isinstance(have, list) and want and have:
            self.rows.append((FieldLine(prefix), FieldLine(prefix)))
            live_items = {_item_key(item, i): (i, item) for i, item in enumerate(have)}
            wanted = set()
            for index, item in enumerate(want):
                key = _item_key(item, index)
                wanted.add(key)
                at, there = live_items.get(key, (index, _MISSING))
                start = len(self.rows)
                self.both(item, there, owners.item(there, at) if there is not _MISSING else owners,
                          indent + 2, " " * (indent + 2) + "-")
                self._dash(start, indent + 2)
            for key, (index, item) in live_items.items():
                if key not in wanted:
                    start = len(self.rows)
                    self.one_side(item, owners.item(item, index), indent + 2, " " * (indent + 2) + "-", False)
                    self._dash(start, indent + 2)
            return
        if isinstance(want, (dict, list)) or isinstance(have, (dict, list)):
            if want == have:  # both empty
                line = FieldLine(f"{prefix} {_scalar(want)}", "same")
                self.rows.append((line, FieldLine(line.text, "same")))
                return
            # A mapping against a scalar, or the like: each side on its own, drifted.
            start = len(self.rows)
            self.one_side(want, None, indent, prefix, True)
            self.one_side(have, owners, indent, prefix, False)
            for row in self.rows[start:]:
                for line in row:
                    if line is not None:
                        line.css = "drifted"
            return
        css = "same" if want == have else "drifted"
        who = _others(owners) if css == "drifted" else []
        self.rows.append((FieldLine(f"{prefix} {_scalar(want)}", css),
                          FieldLine(f"{prefix} {_scalar(have)}", css, who)))

    def _dash(self, start: int, indent: int) -> None:
        """Fold a list item's "-" line into its first key's line on each side,
        as YAML prints a list of mappings ("- name: web")."""
        if len(self.rows) <= start + 1:
            return
        head = self.rows[start]
        for side in (0, 1):
            if head[side] is None or head[side].text.strip() != "-":
                continue
            nxt = next((r[side] for r in self.rows[start + 1:] if r[side] is not None), None)
            if nxt is None:
                continue
            nxt.text = " " * indent + "- " + nxt.text.lstrip()
            nxt.css = nxt.css or head[side].css
            head = self.rows[start] = (None, head[1]) if side == 0 else (head[0], None)
        if head == (None, None):
            del self.rows[start]


def compare(desired: dict | None, live: dict | None) -> ObjectDiff:
    """Both sides as aligned, classed YAML lines (either may be None: not
    rendered / not stored)."""
    owners = _Owners(owner_tree((live or {}).get("metadata", {}).get("managedFields")) if live else None)
    shown = _live_shown(live) if live else None
    writer = _Writer(shown is not None)
    want = desired if desired is not None else {}
    have = shown if shown is not None else {}
    for key in [*want, *(k for k in have if k not in want)]:
        writer.both(want.get(key, _MISSING), have.get(key, _MISSING) if shown is not None else _MISSING,
                    owners.child(key), 0, _scalar(key) + ":")
    counts: dict[str, int] = {}
    for left, right in writer.rows:
        # A drifted value counts once, not once per side; containers not at all.
        line = left or right
        is_value = line is not None and not line.text.rstrip().endswith(":")
        if line is not None and line.css and is_value:
            counts[line.css] = counts.get(line.css, 0) + 1
    return ObjectDiff(writer.rows, counts)
