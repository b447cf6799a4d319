"""Patches on plain dicts: JSON patch, merge patch, strategic merge patch.

Imports nothing above it but the schema: the handler decodes the body
(``decode``), then ``apply_patch`` turns (object, patch) into the new object.
Server-side apply is not a patch engine; it lives in ``kapi.fieldmanager``.
"""

from __future__ import annotations

from typing import Any

from kapi.patch.decode import decode_json, decode_yaml, yaml_duplicate_keys
from kapi.patch.errors import BadPatch, PatchError, PatchFailed
from kapi.patch.json_patch import apply_json_patch
from kapi.patch.merge_patch import merge_patch
from kapi.patch.strategic import strategic_merge_patch
from kapi.schema import TypeSchema

__all__ = [
    "APPLY_PATCH",
    "JSON_PATCH",
    "MERGE_PATCH",
    "PATCH_TYPES",
    "STRATEGIC_MERGE_PATCH",
    "BadPatch",
    "PatchError",
    "PatchFailed",
    "apply_json_patch",
    "apply_patch",
    "decode_json",
    "decode_yaml",
    "merge_patch",
    "strategic_merge_patch",
    "yaml_duplicate_keys",
]

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"
PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH)


def apply_patch(
    patch_type: str, original: dict, patch: Any, schema: TypeSchema | None
) -> Any:
    """The patched object for the three non-apply patch types."""
    if patch_type == JSON_PATCH:
        return apply_json_patch(original, patch)
    if patch_type == MERGE_PATCH:
        if not isinstance(patch, dict):
            raise BadPatch(
                "json: cannot unmarshal into Go value of type map[string]interface {}"
            )
        return merge_patch(original, patch)
    if patch_type == STRATEGIC_MERGE_PATCH:
        return strategic_merge_patch(original, patch, schema)
    raise BadPatch(f"unknown patch type: {patch_type}")
