"""RFC 7386 JSON Merge Patch (``application/merge-patch+json``): ``null`` deletes."""

from __future__ import annotations

import copy
from typing import Any

__all__ = ["merge_patch"]


def merge_patch(target: Any, patch: Any) -> Any:
    """A new document: ``patch`` merged into ``target`` (neither is mutated)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result
