"""Which revision a push asks the validation to check, for each kind of ``spec.ref``.

A GitRepository follows a branch, a tag or a pinned commit (Flux's
``spec.ref``; ``commit`` wins over ``tag``, which wins over ``branch``, as
``sync.gitstore.resolve`` decides). The pre-receive hook sees git's
"old new ref" lines; ``target`` picks the one revision the Syncs would apply
after the push, so validate-on-push works whatever the repository tracks:

- **branch** (default ``main``): the new tip of ``refs/heads/<branch>``.
- **tag**: the commit the pushed ``refs/tags/<tag>`` points to (an annotated
  tag is peeled; a tag of a tree or blob is refused, the source could not use it).
- **commit**: a push cannot move a pinned commit, so there is usually nothing
  to validate; but when the push brings the pinned commit itself (it is
  reachable from a pushed tip and the repository's artifact is not that commit
  yet), that commit is what the Syncs will apply next, and it is validated.

Pushes that leave the tracked ref alone are accepted without rendering
anything; a push deleting the tracked ref is accepted with a warning line
(the Syncs keep what they applied; the GitRepository reports the ref missing).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from sync import gitstore

__all__ = ["PushTarget", "previews", "target"]


@dataclass
class PushTarget:
    """``sha``: the commit to validate (None: nothing to validate); ``what``:
    the tracked ref in words; ``notes``: lines for the pusher; ``refused``: a
    reason to refuse the push before any render."""

    sha: str | None
    what: str
    notes: list[str] = field(default_factory=list)
    refused: str = ""


_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def _updates(lines: Iterable[str]) -> tuple[dict[str, str], str]:
    """ref name → new sha, from pre-receive's "old new ref" lines (the last
    wins), and the first line that is not one (git never sends such a line:
    only a caller of the endpoint itself can)."""
    out: dict[str, str] = {}
    for line in lines:
        parts = str(line).split()
        if not parts:
            continue
        if len(parts) != 3 or not (_SHA.fullmatch(parts[0]) and _SHA.fullmatch(parts[1])):
            return out, str(line)[:100]
        out[parts[2]] = parts[1]
    return out, ""


def target(repo: dict, lines: Iterable[str], path: Path, git_env: dict[str, str] | None = None) -> PushTarget:
    """What the push changes for GitRepository ``repo`` (hosted at ``path``)."""
    meta, spec = repo["metadata"], repo.get("spec") or {}
    ref = spec.get("ref") or {}
    label = f"GitRepository {meta['namespace']}/{meta['name']}"
    updates, bad = _updates(lines)
    if bad:
        return PushTarget(None, "", refused=f"kapi: not a ref update line: {bad!r}")
    if ref.get("commit"):
        pinned = ref["commit"]
        what = f"commit {pinned}"
        artifact = ((repo.get("status") or {}).get("artifact") or {}).get("revision") or ""
        have = artifact.rpartition("sha1:")[2]
        if have and have.startswith(pinned):
            return PushTarget(None, what, [f"kapi: {label} is pinned to {what}: this push changes nothing it applies"])
        sha = gitstore.peel(path, pinned, git_env)
        if sha and any(new != gitstore.ZERO and gitstore.is_ancestor(path, sha, new, git_env) for new in updates.values()):
            return PushTarget(sha, what)
        return PushTarget(None, what, [f"kapi: {label} is pinned to {what}: this push changes nothing it applies"])
    if ref.get("tag"):
        name, what = f"refs/tags/{ref['tag']}", f"tag {ref['tag']}"
    else:
        branch = ref.get("branch") or "main"
        name, what = f"refs/heads/{branch}", f"branch {branch}"
    new = updates.get(name)
    if new is None:
        return PushTarget(None, what)
    if new == gitstore.ZERO:
        return PushTarget(None, what, [f"kapi: warning: this push deletes {name}, which {label} tracks: "
                                       "its Syncs keep what they applied until it exists again"])
    sha = gitstore.peel(path, new, git_env)
    if sha is None:
        return PushTarget(None, what, refused=f"kapi: {name} must point to a commit ({new[:12]} is not one)")
    return PushTarget(sha, what)


def previews(repo: dict, lines: Iterable[str]) -> list[tuple[str, str]]:
    """(branch, new sha) of each pushed branch the repository does not track
    (``sync.prereceive`` previews them); deletions and tags are left out."""
    ref = (repo.get("spec") or {}).get("ref") or {}
    tracked = None if ref.get("commit") or ref.get("tag") else f"refs/heads/{ref.get('branch') or 'main'}"
    updates, _ = _updates(lines)
    return [(name.removeprefix("refs/heads/"), sha) for name, sha in sorted(updates.items())
            if name.startswith("refs/heads/") and name != tracked and sha != gitstore.ZERO]
