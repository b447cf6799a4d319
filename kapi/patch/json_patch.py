"""RFC 6902 JSON Patch (``application/json-patch+json``), including ``test``.

The ``jsonpatch`` package does the work; this module only decodes the document
and maps its errors onto ``BadPatch`` / ``PatchFailed``.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import jsonpointer

from kapi.patch.errors import BadPatch, PatchFailed

__all__ = ["apply_json_patch"]


def apply_json_patch(original: Any, patch: Any) -> Any:
    """A new document: ``patch`` (a list of operations) applied to ``original``.
    ``original`` is not mutated."""
    if not isinstance(patch, list) or not all(isinstance(op, dict) for op in patch):
        raise BadPatch(
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch"
        )
    for op in patch:
        if "op" not in op:
            raise BadPatch("Unexpected kind: missing op")
    doc = copy.deepcopy(original)
    for op in patch:
        doc = _apply_op(doc, op)
    return doc


def _apply_op(doc: Any, op: dict) -> Any:
    try:
        return jsonpatch.JsonPatch([op]).apply(doc, in_place=True)
    except jsonpatch.JsonPatchTestFailed:
        raise PatchFailed(
            f"testing value {op.get('path')} failed: test failed"
        ) from None
    except jsonpatch.InvalidJsonPatch as exc:
        raise PatchFailed(str(exc)) from None
    except (jsonpatch.JsonPatchConflict, jsonpointer.JsonPointerException) as exc:
        raise PatchFailed(str(exc)) from None
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise PatchFailed(f"invalid patch: {exc}") from None
