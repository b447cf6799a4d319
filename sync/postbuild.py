"""Variable substitution after rendering, as Flux's ``spec.postBuild``.

``spec.postBuild.substitute`` (a map) and ``spec.postBuild.substituteFrom``
(ConfigMaps and Secrets of the Sync's namespace, ``kind``, ``name``,
``optional``; read with the Sync's identity, so a Sync cannot read what its
ServiceAccount may not) give the variables; ``substitute`` wins over
``substituteFrom``, a later ``substituteFrom`` over an earlier one.

Each rendered object is written out as YAML, ``${VAR}``, ``${VAR:=default}``
and ``${VAR:-default}`` are replaced, ``$${VAR}`` stays as the literal
``${VAR}``, and the text is read back, so ``replicas: ${REPLICAS}`` becomes a
number as in Flux. A variable that is set nowhere and has no default is an
error naming it (kapi is strict where Flux needs a feature gate). An object
annotated ``kustomize.toolkit.fluxcd.io/substitute: disabled`` (or
``sync.kapi.dev/substitute: disabled``) is left as it is.
"""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any

import orjson
import yaml

from kapi import errors
from kapi.auth import access
from kapi.registry.catalog import catalog
from kapi.registry.store import Registry

__all__ = ["SubstitutionError", "digest", "substitute", "variables"]

_OPT_OUT = ("kustomize.toolkit.fluxcd.io/substitute", "sync.kapi.dev/substitute")
_NAME = r"[_a-zA-Z][_a-zA-Z0-9]*"
_PATTERN = re.compile(r"\$\$\{(" + _NAME + r")([^}]*)\}|\$\{(" + _NAME + r")(?:(:?[=-])([^}]*))?\}")
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class SubstitutionError(Exception):
    """Variables could not be read or resolved; ``messages`` names each."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages


def variables(namespace: str, spec: dict, user, registry: Registry | None = None) -> dict[str, str]:
    """The Sync's variables, read as ``user`` (its identity)."""
    post = spec.get("postBuild") or {}
    registry = registry or Registry()
    out: dict[str, str] = {}
    problems: list[str] = []
    for ref in post.get("substituteFrom") or []:
        kind, name = ref.get("kind"), ref.get("name", "")
        plural = {"ConfigMap": "configmaps", "Secret": "secrets"}.get(kind)
        if plural is None:
            problems.append(f"substituteFrom: kind {kind!r} is not ConfigMap or Secret")
            continue
        rt = catalog().lookup("", "v1", plural)
        try:
            access.check(user, "get", rt, namespace, name)
            obj = registry.get(rt, namespace, name)
        except errors.StatusError as exc:
            if exc.code == 404 and ref.get("optional"):
                continue
            problems.append(f"substituteFrom {kind}/{name}: {exc.status.get('message', exc)}")
            continue
        for key, value in (obj.get("data") or {}).items():
            out[key] = base64.b64decode(value).decode(errors="replace") if kind == "Secret" else str(value)
        if kind == "Secret":
            out.update({k: str(v) for k, v in (obj.get("stringData") or {}).items()})
    if problems:
        raise SubstitutionError(problems)
    out.update({str(k): str(v) for k, v in (post.get("substitute") or {}).items()})
    return out


def digest(values: dict[str, str]) -> str:
    """What the variables contribute to a Sync's render digest (no value shown)."""
    if not values:
        return ""
    return hashlib.sha256(orjson.dumps(values, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _replace(text: str, values: dict[str, str], missing: set[str]) -> str:
    def one(match: re.Match) -> str:
        if match.group(1):  # $${VAR...}: escaped
            return "${" + match.group(1) + match.group(2) + "}"
        name, operator, default = match.group(3), match.group(4), match.group(5)
        value = values.get(name)
        if operator in (":=", ":-") and not value:
            return default or ""
        if operator in ("=", "-") and value is None:
            return default or ""
        if value is None:
            missing.add(name)
            return match.group(0)
        return value

    return _PATTERN.sub(one, text)


def substitute(objects: list[dict[str, Any]], values: dict[str, str], enabled: bool) -> list[dict[str, Any]]:
    """``objects`` with their variables replaced (``enabled``: the Sync has a
    ``postBuild``). Raises ``SubstitutionError`` naming unresolved variables."""
    if not enabled:
        return objects
    out = []
    problems = []
    for obj in objects:
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if any(annotations.get(key) == "disabled" for key in _OPT_OUT):
            out.append(obj)
            continue
        text = yaml.dump(obj, Dumper=_Dumper, default_flow_style=False, allow_unicode=True, width=1 << 30)
        if "${" not in text:
            out.append(obj)
            continue
        missing: set[str] = set()
        replaced = _replace(text, values, missing)
        subject = f"{obj.get('kind')} {obj.get('metadata', {}).get('name')}"
        if missing:
            problems.append(f"{subject}: variable not set: {', '.join(sorted(missing))}")
            continue
        try:
            result = yaml.load(replaced, Loader=_Loader)
        except yaml.YAMLError as exc:
            problems.append(f"{subject}: not YAML after substitution: {' '.join(str(exc).split())[:200]}")
            continue
        if not isinstance(result, dict):
            problems.append(f"{subject}: not an object after substitution")
            continue
        out.append(result)
    if problems:
        raise SubstitutionError(problems)
    return out
