"""patch: the four patch types, server-side apply among them."""

from __future__ import annotations

from typing import Any

from kapi import errors
from kapi.handlers.options import patch_options
from kapi.handlers.scope import RequestScope, Result
from kapi.patch import (
    APPLY_PATCH,
    PATCH_TYPES,
    BadPatch,
    decode_json,
    decode_yaml,
    yaml_duplicate_keys,
)
from kapi.registry.patch import unsupported_patch_type
from kapi.registry.store import Registry

__all__ = ["PatchBody", "patch"]


class PatchBody:
    """A patch as it came: the raw bytes and the patch type (its media type)."""

    __slots__ = ("patch_type", "raw")

    def __init__(self, raw: bytes, patch_type: str) -> None:
        self.raw = raw
        self.patch_type = patch_type


def patch(scope: RequestScope, registry: Registry, body: Any) -> Result:
    rt = scope.resource
    if not isinstance(body, PatchBody) or body.patch_type not in PATCH_TYPES:
        # application/json and friends are not patches.
        raise unsupported_patch_type(rt)
    apply = body.patch_type == APPLY_PATCH
    options = patch_options(scope, apply)
    try:
        document, duplicates = decode_yaml(body.raw) if apply else decode_json(body.raw)
    except BadPatch as exc:
        raise errors.bad_request(str(exc)) from None
    options.duplicate_fields = duplicates
    if apply and duplicates:
        # kube decodes every apply body as YAML, JSON ones too.
        options.yaml_duplicates = yaml_duplicate_keys(body.raw)
    obj, created = registry.patch(
        rt, scope.namespace or "", scope.name, body.patch_type, document, options
    )
    return Result(201 if created else 200, obj, warnings=list(options.warnings))
