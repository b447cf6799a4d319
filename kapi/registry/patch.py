"""PATCH and server-side apply for the generic registry.

Both read the live object inside the guaranteed update, compute the new object
(a patch engine, or the field manager's apply), and then take the same path as
a PUT: type checks, ``_prepare_update`` (kube's BeforeUpdate), validation, and
no write when nothing changed. Apply to a missing object creates it.
"""

from __future__ import annotations

from typing import Any

from kapi import errors
from kapi.objcopy import deep_copy
from kapi.patch import (
    APPLY_PATCH,
    STRATEGIC_MERGE_PATCH,
    BadPatch,
    PatchFailed,
    apply_patch,
)
from kapi.registry.fields import check_applied_fields, check_fields, field_manager
from kapi.registry.options import PatchOptions
from kapi.registry.resource import ResourceType
from kapi.schema import schema_for
from kapi.storage import KeyNotFound

__all__ = [
    "PATCH_MEDIA_TYPES",
    "PatchMixin",
    "strategic_merge_allowed",
    "unsupported_patch_type",
]

Object = dict[str, Any]

PATCH_MEDIA_TYPES = (
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
)
_MODIFIED = "the object has been modified; please apply your changes to the latest version and try again"


def strategic_merge_allowed(rt: ResourceType) -> bool:
    """kube serves strategic merge patch for built-in kinds only: custom resources
    have no patch strategies (kubectl then falls back to a merge patch)."""
    return "crd" not in rt.extra and schema_for(rt) is not None


def unsupported_patch_type(rt: ResourceType) -> errors.StatusError:
    supported = [
        t
        for t in PATCH_MEDIA_TYPES
        if t != STRATEGIC_MERGE_PATCH or strategic_merge_allowed(rt)
    ]
    return errors.unsupported_media_type("", supported)


class PatchMixin:
    """``Registry.patch``; relies on the registry's helpers (``_check_type``,
    ``_prepare_update``, ``_guaranteed_update``, ``_create``)."""

    def patch(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        patch_type: str,
        patch: Any,
        options: PatchOptions | None = None,
    ) -> tuple[Object, bool]:
        """Returns (object, created); only apply creates."""
        options = options or PatchOptions()
        if patch_type == APPLY_PATCH:
            return self._apply(rt, namespace, name, patch, options)
        schema = schema_for(rt)
        if patch_type not in PATCH_MEDIA_TYPES or (
            patch_type == STRATEGIC_MERGE_PATCH and not strategic_merge_allowed(rt)
        ):
            raise unsupported_patch_type(rt)
        key = self.key(rt, namespace, name)

        def try_update(current_stored: Object) -> Object:
            current = self._out(rt, current_stored)
            try:
                patched = apply_patch(patch_type, current, patch, schema)
            except BadPatch as exc:
                raise errors.bad_request(str(exc)) from None
            except PatchFailed as exc:
                raise errors.StatusError(
                    errors.status_failure(422, "Invalid", str(exc))
                ) from None
            new = self._check_type(rt, patched)
            del options.warnings[:]
            check_fields(rt, new, options, strict_code=422)
            self._same_identity(rt, new, current, name)
            self._check_namespace(rt, new, namespace)
            if (
                new["metadata"].get("resourceVersion")
                != current["metadata"]["resourceVersion"]
            ):
                raise errors.conflict(rt.group, rt.plural, name, _MODIFIED)
            self._prepare_update(rt, new, current, options.subresource, options)
            return new

        return self._guaranteed_update(
            rt, key, name, try_update, options.dry_run
        ), False

    def _same_identity(
        self, rt: ResourceType, new: Object, current: Object, name: str
    ) -> None:
        meta = new["metadata"]
        if meta.get("name", "") != name:
            raise errors.bad_request(
                f"the name of the object ({meta.get('name', '')}) does not match the name on the URL ({name})"
            )
        if meta.get("uid") and meta["uid"] != current["metadata"].get("uid"):
            raise errors.conflict(
                rt.group,
                rt.plural,
                name,
                f"Precondition failed: UID in precondition: {meta['uid']}, "
                f"UID in object meta: {current['metadata'].get('uid')}",
            )

    def _apply(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        config: Any,
        options: PatchOptions,
    ) -> tuple[Object, bool]:
        if not isinstance(config, dict):
            raise errors.bad_request(
                "the applied configuration must be a YAML or JSON object"
            )
        config = self._check_type(rt, config)
        meta = config["metadata"]
        if meta.get("name") and meta["name"] != name:
            raise errors.bad_request(
                f"the name of the object ({meta['name']}) does not match the name on the URL ({name})"
            )
        meta["name"] = name
        check_applied_fields(rt, config, options)
        manager = field_manager(rt, options.subresource)
        key = self.key(rt, namespace, name)
        try:
            self.storage.get(key)
        except KeyNotFound:
            if options.subresource:
                raise errors.not_found(rt.group, rt.plural, name) from None
            obj = manager.apply(
                None, deep_copy(config), options.field_manager, options.force
            )
            try:
                return self._create(rt, namespace, obj, options, lambda o: None), True
            except errors.StatusError as exc:
                if exc.code != 409 or exc.reason != "AlreadyExists":
                    raise
                # Created meanwhile: apply to it like to any live object.

        def try_update(current_stored: Object) -> Object:
            current = self._out(rt, current_stored)
            new = manager.apply(
                current, deep_copy(config), options.field_manager, options.force
            )
            new = self._check_type(rt, new)
            self._check_namespace(rt, new, namespace)
            managed = new["metadata"].get("managedFields")
            self._prepare_update(rt, new, current, options.subresource)
            # A /status write takes metadata from the live object; keep the
            # ownership the apply just computed.
            if managed is None:
                new["metadata"].pop("managedFields", None)
            else:
                new["metadata"]["managedFields"] = managed
            return new

        return self._guaranteed_update(
            rt, key, name, try_update, options.dry_run
        ), False
