"""What the GitOps pages say about a Sync: a summary row in words.

:func:`sync_rows` reads every Sync the signed-in user may list (one
statement), their GitRepositories (one statement) and the labels and
managedFields of the objects the Syncs applied (one statement, for drift and
missing counts), and turns each Sync into a :class:`SyncRow`: Ready, health
by kstatus rules (``sync.health``), the revision applied with its commit
message and author, the source, the target, held prunes, pins, suspension and
the last failure in words.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from kapi.storage import gitopsreads

__all__ = ["STATES", "SyncRow", "commit_of", "short_revision", "summarize", "sync_rows"]

Object = dict[str, Any]

#: The states a row is filtered by, in the order the filter offers them.
STATES = ("ready", "failed", "progressing", "held", "suspended", "never-applied")

_GROUP = "sync.kapi.dev"
_LABEL_NAME = "sync.kapi.dev/name"
_LABEL_NAMESPACE = "sync.kapi.dev/namespace"


@dataclass
class SyncRow:
    namespace: str
    name: str
    ready: str = "Unknown"
    reason: str = ""
    message: str = ""
    health: str = ""
    state: str = "progressing"
    revision: str = ""
    sha: str = ""
    branch: str = ""
    commit_message: str = ""
    author: str = ""
    applied_at: str = ""
    source: str = ""
    source_url: str = ""
    path: str = "./"
    target: str = ""
    suspended: bool = False
    prune_held: str = ""
    pinned: str = ""
    failure: str = ""
    inventory: int = 0
    drifted: int = 0
    missing: int = 0
    counts: dict = field(default_factory=dict)
    obj: Object = field(default_factory=dict, repr=False)


def short_revision(revision: str) -> tuple[str, str]:
    """(branch, sha) of ``main@sha1:abc…`` (either may be "")."""
    if not revision:
        return "", ""
    branch, _, sha = revision.rpartition("@sha1:") if "@sha1:" in revision else ("", "", revision)
    return branch, sha.removeprefix("sha1:")


@lru_cache(maxsize=4096)
def _commit(kind: str, namespace: str, name: str, sha: str) -> tuple[str, str]:
    from sync import gitstore

    path = (gitstore.hosted_path if kind == "hosted" else gitstore.mirror_path)(namespace, name)
    if not path.exists():
        return "", ""
    try:
        info = gitstore.commit_info(path, sha)
    except Exception:  # a pruned or unreadable commit: say nothing rather than fail a page
        return "", ""
    return info.message, info.author


def commit_of(repo: Object | None, sha: str) -> tuple[str, str]:
    """(message, author) of commit ``sha`` of the GitRepository ``repo``: from
    its artifact when that is the commit, else from the repository on disk
    (cached: a commit never changes)."""
    if not repo or not sha:
        return "", ""
    artifact = (repo.get("status") or {}).get("artifact") or {}
    if short_revision(str(artifact.get("revision") or ""))[1] == sha:
        return str(artifact.get("message") or ""), str(artifact.get("author") or "")
    meta = repo["metadata"]
    kind = "mirror" if (repo.get("spec") or {}).get("url") else "hosted"
    return _commit(kind, meta.get("namespace", ""), meta.get("name", ""), sha)


def _condition(status: Object, type_: str) -> Object:
    return next((c for c in status.get("conditions") or [] if isinstance(c, dict) and c.get("type") == type_), {})


def summarize(sync: Object, repo: Object | None) -> SyncRow:
    """One Sync (and its GitRepository, if found) in words."""
    from sync.health import compute

    meta = sync.get("metadata") or {}
    spec = sync.get("spec") if isinstance(sync.get("spec"), dict) else {}
    status = sync.get("status") if isinstance(sync.get("status"), dict) else {}
    ready = _condition(status, "Ready")
    row = SyncRow(meta.get("namespace", ""), meta.get("name", ""), obj=sync)
    row.ready = ready.get("status", "Unknown")
    row.reason = ready.get("reason", "")
    row.message = ready.get("message", "")
    row.health = compute(sync).status
    row.revision = str(status.get("lastAppliedRevision") or "")
    row.branch, row.sha = short_revision(row.revision)
    entry = next((e for e in status.get("history") or []
                  if isinstance(e, dict) and e.get("revision") == row.revision), {})
    if row.revision:
        row.commit_message, row.author = commit_of(repo, row.sha)
        row.applied_at = str(entry.get("lastReconciled") or "")
    source = spec.get("sourceRef") or {}
    row.source = str(source.get("name") or "")
    row.source_url = str(((repo or {}).get("spec") or {}).get("url") or "")
    row.path = str(spec.get("path") or "./")
    row.target = str(spec.get("targetNamespace") or row.namespace)
    remote = status.get("target") if isinstance(status.get("target"), dict) else {}
    if remote.get("server") or spec.get("kubeConfig"):
        # Another cluster (spec.kubeConfig): its server, once connected.
        row.target = f"{remote.get('server') or 'another cluster'} · {row.target}"
    row.suspended = bool(spec.get("suspend"))
    row.prune_held = str(status.get("pruneHeldRevision") or "") if row.reason == "PruneHeld" else ""
    pin = status.get("pin") if isinstance(status.get("pin"), dict) else {}
    row.pinned = str(pin.get("revision") or "")
    if row.ready == "False":
        row.failure = row.message
    inventory = (status.get("inventory") or {}).get("entries") if isinstance(status.get("inventory"), dict) else None
    row.inventory = len(inventory or [])
    row.counts = {k: status[k] for k in ("applied", "unchanged", "pruned") if isinstance(status.get(k), int)}
    row.state = _state(row)
    return row


def _state(row: SyncRow) -> str:
    if row.suspended:
        return "suspended"
    if row.prune_held:
        return "held"
    if row.ready == "True":
        return "ready"
    if not row.revision and (row.ready != "False" or row.reason == "ArtifactFailed"):
        # Waiting for a source (a hosted repository before its first push).
        return "never-applied"
    return "failed" if row.ready == "False" else "progressing"


def sync_rows(sync_rt, repo_rt, namespaces: list[str] | None,
              repo_namespaces: list[str] | None = None) -> list[SyncRow]:
    """Every Sync in ``namespaces`` (None: all) as a row, in key order; their
    GitRepositories are read in ``repo_namespaces`` (None: all) only."""
    stored = gitopsreads.in_namespaces(sync_rt.stored_group, sync_rt.stored_resource, namespaces)
    repos: dict[tuple[str, str], Object] = {}
    spaces = sorted({s.namespace for s in stored})
    if repo_namespaces is not None:
        spaces = [ns for ns in spaces if ns in set(repo_namespaces)]
    if repo_rt is not None and spaces:
        for r in gitopsreads.in_namespaces(repo_rt.stored_group, repo_rt.stored_resource, spaces):
            repos[(r.namespace, r.name)] = repo_rt.strategy.from_storage(r.object, repo_rt.version)
    rows = []
    for s in stored:
        sync = sync_rt.strategy.from_storage(s.object, sync_rt.version)
        name = ((sync.get("spec") or {}).get("sourceRef") or {}).get("name", "")
        rows.append(summarize(sync, repos.get((s.namespace, name))))
    _count_drift(rows, None if namespaces is None else sorted({r.namespace for r in rows}))
    return rows


def _count_drift(rows: list[SyncRow], namespaces: list[str] | None) -> None:
    """Fill ``drifted`` (changed by another manager since the Sync applied it)
    and ``missing`` (in the inventory, not stored) of each row."""
    from kapi.admin.synctree import applied_by_sync, drifted

    if not rows:
        return
    found: dict[tuple[str, str], int] = {}
    by_key = {(r.namespace, r.name): r for r in rows}
    among = (_LABEL_NAMESPACE, namespaces) if namespaces is not None else None
    for meta in gitopsreads.labelled(_LABEL_NAME, among):
        labels = meta.get("labels") or {}
        key = (labels.get(_LABEL_NAMESPACE, ""), labels.get(_LABEL_NAME, ""))
        row = by_key.get(key)
        if row is None or not applied_by_sync(meta):
            continue
        found[key] = found.get(key, 0) + 1
        if drifted(meta):
            row.drifted += 1
    for key, row in by_key.items():
        row.missing = max(0, row.inventory - found.get(key, 0))
