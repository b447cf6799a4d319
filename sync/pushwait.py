"""What a pushed revision has become in each Sync that uses it: the answer
``git push -o wait`` asks for until it is final.

The ``proc-receive`` hook (``sync.pushwait_hook``) updates the tracked ref
itself, then asks the API server (``sync.http.push_wait``) every fraction of
a second for ``outcome``: one line per Sync saying where it stands (fetched,
applying, waiting for N objects to become healthy, Ready with its counts,
failed with its reason), and whether all of them are done. The hook prints
the lines that changed as ``remote:`` lines and, when every Sync is done or
the wait is over, reports the ref ``ok`` or ``ng`` (git's exit status).

A Sync is done with the pushed commit when its status says so:

- **Ready**: ``Ready=True`` and ``lastAppliedRevision`` is the commit (with
  ``spec.wait``, only once its objects are healthy);
- **failed**: ``Ready=False`` for an attempt of the commit
  (``lastAttemptedRevision``), or ``Stalled=True`` (nothing will apply it
  until its spec changes);
- **not waited for**: suspended, or the pusher may not ``get`` it (its name is
  no secret from them: the push's plan names every Sync of the repository).

A Sync that has not attempted the commit yet (the repository is still
fetching it, a dependency is not ready, a retry is due) is still pending.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from kapi import errors
from kapi.auth import access
from kapi.registry.store import Registry
from sync import pushref
from sync.kinds import repository_type, sync_type
from sync.source import repository_dir, syncs_of

__all__ = ["Outcome", "outcome"]

#: The longest message of a status shown on one line.
_MESSAGE_CHARS = 300


@dataclass
class Outcome:
    """``lines``: where each Sync stands now, one line each; ``pending``,
    ``failed``: "Sync ns/name: ..." of those not done and those that failed;
    ``done``: nothing is pending."""

    lines: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return not self.pending


def _condition(status: dict, type_: str) -> dict:
    return next((c for c in status.get("conditions") or [] if c.get("type") == type_), {})


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= _MESSAGE_CHARS else text[: _MESSAGE_CHARS - 1] + "…"


def _is(revision: str | None, sha: str) -> bool:
    return bool(revision) and revision.rsplit("sha1:", 1)[-1] == sha


def _counts(status: dict, revision: str) -> str:
    """": N applied, M pruned" from the history entry of ``revision`` (a
    ``spec.wait`` health check that passes in a later pass adds to the entry
    of the pass that applied); "" for an entry with no rendered digest (a
    revision that failed before it rendered)."""
    entry = next((e for e in status.get("history") or [] if isinstance(e, dict)
                  and e.get("revision") == revision), None)
    if entry is None or not entry.get("digest"):
        return ""
    return f": {entry.get('applied', 0)} applied, {entry.get('pruned', 0)} pruned"


def sync_state(sync: dict, sha: str) -> tuple[str, str]:
    """("ready" | "failed" | "pending" | "skipped", line) of ``sync`` for commit ``sha``."""
    meta, spec = sync["metadata"], sync.get("spec") or {}
    status = sync.get("status") or {}
    label = f"Sync {meta['namespace']}/{meta['name']}"
    if spec.get("suspend"):
        return "skipped", f"{label} is suspended: it applies nothing until resumed (not waited for)"
    ready, reconciling = _condition(status, "Ready"), _condition(status, "Reconciling")
    current = status.get("observedGeneration") == meta.get("generation")
    if _condition(status, "Stalled").get("status") == "True" and current:
        return "failed", f"{label} failed: {ready.get('reason', 'Stalled')}: {_short(ready.get('message', ''))}"
    if ready.get("status") == "True" and current and _is(status.get("lastAppliedRevision"), sha):
        revision = status["lastAppliedRevision"]
        healthy = ", healthy" if spec.get("wait") else ""
        return "ready", f"{label}: Ready: applied {revision}{_counts(status, revision)}{healthy}"
    if ready.get("status") == "False" and reconciling.get("status") != "True" \
            and _is(status.get("lastAttemptedRevision"), sha):
        return "failed", f"{label} failed: {ready.get('reason', 'Failed')}: {_short(ready.get('message', ''))}"
    if reconciling.get("status") == "True":
        return "pending", f"{label}: {_short(reconciling.get('message', ''))}"
    if ready.get("status") == "False":
        return "pending", f"{label}: waiting ({ready.get('reason')}: {_short(ready.get('message', ''))})"
    return "pending", f"{label}: waiting to apply {sha[:12]}"


def _repository_line(repo: dict, sha: str) -> str:
    meta = repo["metadata"]
    label = f"GitRepository {meta['namespace']}/{meta['name']}"
    revision = ((repo.get("status") or {}).get("artifact") or {}).get("revision")
    if _is(revision, sha):
        return f"{label}: fetched {revision}"
    return f"{label}: fetching {sha[:12]}"


def outcome(namespace: str, name: str, updates: Iterable[str], user, registry: Registry | None = None) -> Outcome:
    """Where the Syncs of GitRepository ``namespace/name`` stand with the
    revision that the ref ``updates`` ("old new ref" lines, already applied)
    gave them, as ``user`` (the pusher) may see them."""
    registry = registry or Registry()
    repo = registry.get(repository_type(), namespace, name)
    pushed = pushref.target(repo, list(updates), repository_dir(repo))
    result = Outcome()
    if pushed.sha is None:
        result.lines = [*pushed.notes, "kapi: this push changes nothing the Syncs apply; nothing to wait for"]
        return result
    result.lines.append(f"kapi: {_repository_line(repo, pushed.sha)}")
    syncs = syncs_of(namespace, name, registry)
    if not syncs:
        result.lines.append(f"kapi: no Sync uses GitRepository {namespace}/{name}; nothing to wait for")
    for sync in syncs:
        smeta = sync["metadata"]
        try:
            access.check(user, "get", sync_type(), smeta["namespace"], smeta["name"])
        except errors.StatusError as exc:
            result.lines.append(f"kapi: Sync {smeta['namespace']}/{smeta['name']}: not waited for: "
                                f"{_short(exc.status.get('message', 'forbidden'))}")
            continue
        phase, line = sync_state(sync, pushed.sha)
        result.lines.append(f"kapi: {line}")
        if phase == "pending":
            result.pending.append(line)
        elif phase == "failed":
            result.failed.append(line)
    return result
