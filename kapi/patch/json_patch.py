"""RFC 6902 JSON Patch (``application/json-patch+json``), including ``test``.

The ``jsonpatch`` package does the work; this module only decodes the document
and maps its errors onto ``BadPatch`` / ``PatchFailed``.
"""

from __future__ import annotations

from typing import Any

import jsonpatch
import jsonpointer

from kapi.patch.errors import BadPatch, PatchFailed

__all__ = ["apply_json_patch"]


def apply_json_patch(original: Any, patch: Any) -> Any:
    """A new document: ``patch`` (a list of operations) applied to ``original``.
    ``original`` is not mutated."""
    if not isinstance(patch, list) or not all(isinstance(op, dict) for op in patch):
        raise BadPatch("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    for op in patch:
        if "op" not in op:
            raise BadPatch("Unexpected kind: missing op")
    try:
        compiled = jsonpatch.JsonPatch(patch)
        return compiled.apply(original, in_place=False)
    except jsonpatch.JsonPatchTestFailed as exc:
        raise PatchFailed(f"testing value failed: {exc}") from None
    except jsonpatch.InvalidJsonPatch as exc:
        raise PatchFailed(str(exc)) from None
    except (jsonpatch.JsonPatchConflict, jsonpointer.JsonPointerException) as exc:
        raise PatchFailed(str(exc)) from None
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise PatchFailed(f"invalid patch: {exc}") from None
