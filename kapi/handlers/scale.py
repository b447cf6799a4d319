"""get, update and patch of the ``/scale`` subresource (an ``autoscaling/v1`` Scale).

The Scale is a view of the scaled object through its strategy's ``scale``
paths; writing it changes only the desired replicas of the object, through the
registry's ordinary update (so resourceVersion, generation and validation apply).
A patch (merge or JSON patch, as ``kubectl scale`` sends) is applied to the
current Scale.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from kapi import errors
from kapi.errors import Cause
from kapi.handlers.options import update_options
from kapi.handlers.scope import RequestScope, Result
from kapi.kinds.scale import ScalePaths, apply_scale, to_scale
from kapi.registry.store import Registry
from kapi.storage.interface import Preconditions

__all__ = ["get", "patch", "update"]


def _paths(scope: RequestScope) -> ScalePaths:
    paths = getattr(scope.resource.strategy, "scale", None)
    if paths is None:
        raise errors.not_found(
            scope.resource.group, f"{scope.resource.plural}/scale", scope.name
        )
    return paths


def get(scope: RequestScope, registry: Registry) -> Result:
    paths = _paths(scope)
    obj = registry.get(scope.resource, scope.namespace or "", scope.name)
    return Result(200, to_scale(obj, paths), transformable=False)


def _write(
    scope: RequestScope, registry: Registry, scale: Any, rv: str | None
) -> Result:
    rt = scope.resource
    paths = _paths(scope)
    spec = (scale.get("spec") or {}) if isinstance(scale, dict) else None
    replicas = spec.get("replicas") if isinstance(spec, dict) else None
    if isinstance(spec, dict) and replicas is None:
        replicas = 0  # omitempty: absent (or null) decodes to 0, as in kube
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise errors.invalid(
            "autoscaling",
            "Scale",
            scope.name,
            [
                Cause(
                    "FieldValueInvalid",
                    f"Invalid value: {replicas}: must be greater than or equal to 0",
                    "spec.replicas",
                )
            ],
        )
    options = update_options(scope)
    options.subresource = ""
    preconditions = Preconditions(resource_version=int(rv)) if rv else None
    obj = registry.update_with(
        rt,
        scope.namespace or "",
        scope.name,
        lambda o: apply_scale(o, replicas, paths),
        options,
        preconditions,
    )
    return Result(200, to_scale(obj, paths), transformable=False)


def update(scope: RequestScope, registry: Registry, body: Any) -> Result:
    rv = (
        ((body or {}).get("metadata") or {}).get("resourceVersion")
        if isinstance(body, dict)
        else None
    )
    return _write(scope, registry, body, rv)


def _merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge(out.get(key), value)
    return out


def _json_patch(doc: Any, ops: list) -> Any:
    doc = copy.deepcopy(doc)
    for op in ops:
        parts = [
            p.replace("~1", "/").replace("~0", "~")
            for p in op.get("path", "").split("/")[1:]
        ]
        node = doc
        for part in parts[:-1]:
            node = (
                node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
            )
        last = parts[-1] if parts else ""
        if op.get("op") in ("add", "replace"):
            node[last] = op.get("value")
        elif op.get("op") == "remove":
            node.pop(last, None)
        elif op.get("op") == "test" and node.get(last) != op.get("value"):
            raise errors.StatusError(
                errors.status_failure(
                    422,
                    "Invalid",
                    "the server rejected our request due to an error in our request",
                )
            )
    return doc


def patch(
    scope: RequestScope, registry: Registry, raw: bytes, content_type: str
) -> Result:
    paths = _paths(scope)
    current = to_scale(
        registry.get(scope.resource, scope.namespace or "", scope.name), paths
    )
    try:
        body = orjson.loads(raw or b"{}")
    except orjson.JSONDecodeError as exc:
        raise errors.bad_request(f"error decoding patch: {exc}") from None
    if content_type.startswith("application/json-patch+json"):
        patched = _json_patch(current, body if isinstance(body, list) else [])
    else:
        # merge-patch and strategic-merge-patch agree on a Scale (no lists).
        patched = _merge(current, body)
    rv = (
        (body.get("metadata") or {}).get("resourceVersion")
        if isinstance(body, dict)
        else None
    )
    return _write(scope, registry, patched, rv)
