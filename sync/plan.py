"""What a revision will do, for the pusher: objects to create, to change (with
the fields that change) and to prune, computed from the same server-side
dry-run apply that validates the push, so defaulted fields and fields of
other managers never show as changes.

``Plan.lines()`` is bounded: a summary line first, then the first objects,
then a count of the rest. Values are shown shortened, and never for a Secret
(only which keys change).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Plan", "changed_fields"]

#: Metadata that every write changes or that the server owns.
_VOLATILE = ("resourceVersion", "managedFields", "generation", "creationTimestamp", "uid", "selfLink")
_SHOWN_OBJECTS = 20
_SHOWN_FIELDS = 4
_SHOWN_VALUE = 40


def _stable(obj: dict) -> dict:
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in _VOLATILE}
    return {**{k: v for k, v in obj.items() if k not in ("metadata", "status")}, "metadata": meta}


def _leaves(value: Any, path: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict) and value:
        for key, item in value.items():
            _leaves(item, f"{path}.{key}" if path else str(key), out)
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            _leaves(item, f"{path}[{index}]", out)
    else:
        out[path] = value


def changed_fields(live: dict, after: dict) -> list[tuple[str, Any, Any]]:
    """(field path, before, after) of every leaf that differs between the live
    object and the one the apply would store (status and server-owned
    metadata left out); a missing side is ``None``."""
    before: dict[str, Any] = {}
    now: dict[str, Any] = {}
    _leaves(_stable(live), "", before)
    _leaves(_stable(after), "", now)
    paths = sorted(set(before) | set(now))
    return [(p, before.get(p), now.get(p)) for p in paths if before.get(p) != now.get(p)]


def _short(value: Any) -> str:
    text = "<none>" if value is None else str(value)
    return text if len(text) <= _SHOWN_VALUE else text[: _SHOWN_VALUE - 1] + "…"


@dataclass
class Plan:
    """The plan of one Sync for one revision."""

    creates: list[str] = field(default_factory=list)
    changes: list[tuple[str, list[str]]] = field(default_factory=list)
    prunes: list[str] = field(default_factory=list)
    unchanged: int = 0
    #: Show which fields change but no values (a Sync that decrypts SOPS files).
    hide_values: bool = False

    def record(self, subject: str, kind: str, live: dict | None, after: dict) -> None:
        """Note what applying ``after`` over ``live`` (None: absent) does."""
        if live is None:
            self.creates.append(subject)
            return
        diffs = changed_fields(live, after)
        if not diffs:
            self.unchanged += 1
            return
        secret = kind == "Secret" or self.hide_values
        shown = [
            f"{path}" if secret else f"{path}: {_short(old)} → {_short(new)}"
            for path, old, new in diffs[:_SHOWN_FIELDS]
        ]
        if len(diffs) > _SHOWN_FIELDS:
            shown.append(f"and {len(diffs) - _SHOWN_FIELDS} more fields")
        self.changes.append((subject, shown))

    def summary(self) -> str:
        return (f"{len(self.creates)} to create, {len(self.changes)} to change, "
                f"{len(self.prunes)} to prune, {self.unchanged} unchanged")

    def lines(self, limit: int = _SHOWN_OBJECTS) -> list[str]:
        """The summary, then at most ``limit`` objects, then how many more."""
        items = ([f"+ {s}" for s in self.creates]
                 + [f"~ {s}: {'; '.join(fields)}" for s, fields in self.changes]
                 + [f"- {s}" for s in self.prunes])
        out = [f"plan: {self.summary()}", *(f"  {item}" for item in items[:limit])]
        if len(items) > limit:
            out.append(f"  … and {len(items) - limit} more")
        return out
