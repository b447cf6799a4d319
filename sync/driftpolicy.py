"""What a Sync leaves to others: per-object apply policies and ignored fields.

Per object, the annotation ``sync.kapi.dev/ssa`` (Flux's
``kustomize.toolkit.fluxcd.io/ssa``):

* ``IfNotPresent``: created when absent, never changed afterwards (a Secret
  that another tool rotates, a seed ConfigMap);
* ``Ignore``: neither created, changed nor pruned by the Sync.

Per Sync, ``spec.driftIgnoreRules`` (Flux's field): each rule names JSON
Pointer ``paths`` and an optional ``target`` (``group``, ``version``,
``kind``, ``name``, ``namespace`` as regular expressions, ``labelSelector``,
``annotationSelector``). For an object that exists, the Sync applies the
live value at those paths instead of its own (or leaves the path out when
the live object has none), so drift correction, the push plan and the
unchanged check never fight, e.g., an autoscaler's ``/spec/replicas``; a new
object is created with the repository's values.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from kapi.selectors.labels import parse_label_selector

__all__ = ["IF_NOT_PRESENT", "IGNORE", "SSA_ANNOTATION", "ignored_paths", "policy", "with_live_values"]

SSA_ANNOTATION = "sync.kapi.dev/ssa"
IF_NOT_PRESENT = "IfNotPresent"
IGNORE = "Ignore"


def policy(obj: dict) -> str:
    """The object's apply policy: ``IfNotPresent``, ``Ignore`` or "" (always apply)."""
    value = ((obj.get("metadata") or {}).get("annotations") or {}).get(SSA_ANNOTATION)
    return value if value in (IF_NOT_PRESENT, IGNORE) else ""


def _full(pattern: Any, value: str) -> bool:
    if not pattern:
        return True
    try:
        return re.fullmatch(str(pattern), value) is not None
    except re.error:
        return False


def _selects(selector: Any, values: dict) -> bool:
    if not selector:
        return True
    try:
        return parse_label_selector(str(selector)).matches(values)
    except Exception:  # a selector that does not parse selects nothing
        return False


def _targets(target: dict | None, group: str, version: str, kind: str, namespace: str, obj: dict) -> bool:
    if not target:
        return True
    meta = obj.get("metadata") or {}
    return (_full(target.get("group"), group) and _full(target.get("version"), version)
            and _full(target.get("kind"), kind) and _full(target.get("name"), str(meta.get("name", "")))
            and _full(target.get("namespace"), namespace)
            and _selects(target.get("labelSelector"), meta.get("labels") or {})
            and _selects(target.get("annotationSelector"), meta.get("annotations") or {}))


def ignored_paths(rules: list[dict] | None, group: str, version: str, kind: str, namespace: str,
                  obj: dict) -> list[str]:
    """The JSON Pointers of ``spec.driftIgnoreRules`` that apply to ``obj``."""
    out: list[str] = []
    for rule in rules or []:
        if isinstance(rule, dict) and _targets(rule.get("target"), group, version, kind, namespace, obj):
            out += [p for p in rule.get("paths") or [] if isinstance(p, str) and p.startswith("/")]
    return out


def _tokens(pointer: str) -> list[str]:
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]


_MISSING = object()


def _get(doc: Any, tokens: list[str]) -> Any:
    for token in tokens:
        if isinstance(doc, dict) and token in doc:
            doc = doc[token]
        elif isinstance(doc, list) and token.isdigit() and int(token) < len(doc):
            doc = doc[int(token)]
        else:
            return _MISSING
    return doc


def _set(doc: Any, tokens: list[str], value: Any) -> None:
    """Set (or, ``value`` missing, remove) the pointer's target; parents that the
    configuration lacks are created as objects only when there is a value."""
    for token in tokens[:-1]:
        if isinstance(doc, list) and token.isdigit() and int(token) < len(doc):
            doc = doc[int(token)]
        elif isinstance(doc, dict):
            if token not in doc:
                if value is _MISSING:
                    return
                doc[token] = {}
            doc = doc[token]
        else:
            return
    last = tokens[-1]
    if isinstance(doc, dict):
        if value is _MISSING:
            doc.pop(last, None)
        else:
            doc[last] = copy.deepcopy(value)
    elif isinstance(doc, list) and last.isdigit() and int(last) < len(doc) and value is not _MISSING:
        doc[int(last)] = copy.deepcopy(value)


def with_live_values(obj: dict, live: dict, paths: list[str]) -> dict:
    """``obj`` with the live object's value at each of ``paths`` (removed where
    the live object has none)."""
    if not paths:
        return obj
    out = copy.deepcopy(obj)
    for pointer in paths:
        tokens = _tokens(pointer)
        if tokens:
            _set(out, tokens, _get(live, tokens))
    return out
