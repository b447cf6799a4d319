"""Commits named by a Sync's annotations (``allow-prune``, ``pin``).

People write a commit as git shows it: a full sha or an abbreviation of at
least 7 hex digits. Anything else (a branch name, a typo, "true") names no
commit, so it allows nothing and pins nothing.
"""

from __future__ import annotations

import re

__all__ = ["annotated_commit", "names"]

_ABBREVIATED_SHA = re.compile(r"[0-9a-f]{7,64}")


def annotated_commit(metadata: dict, annotation: str) -> str:
    """The commit (lower case) an annotation of ``metadata`` names; "" when none."""
    value = str((metadata.get("annotations") or {}).get(annotation) or "").strip().lower()
    return value if _ABBREVIATED_SHA.fullmatch(value) else ""


def names(prefix: str, sha: str) -> bool:
    """Whether the abbreviation ``prefix`` names the commit ``sha``."""
    return bool(prefix) and sha.lower().startswith(prefix)
