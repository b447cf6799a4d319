"""Reconciling a GitRepository: fetch, resolve the ref, record the artifact.

Hosted repositories are already local (pushes land in them); remote ones are
fetched into a local mirror. When the resolved revision changes, every Sync
that uses the repository is asked to reconcile; they all share the mirror and
one checkout of the revision (``sync.gitstore``).
"""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

from kapi import errors
from kapi.registry.catalog import catalog
from kapi.registry.store import Registry, now_rfc3339
from sync import controllers, gitstore
from sync.credentials import GitCredentials
from sync.kinds import parse_duration, repository_type, sync_type
from sync.localsource import SourceRefused, check_url
from sync.status import set_condition, update_status

__all__ = ["AWAITING_PUSH", "reconcile_repository", "repository_dir", "secret_data", "syncs_of"]

#: Ready's reason on a hosted repository nothing has been pushed to yet.
AWAITING_PUSH = "AwaitingPush"


def secret_data(namespace: str, name: str, registry: Registry | None = None) -> dict[str, str]:
    """The decoded ``data`` (and ``stringData``) of a Secret."""
    registry = registry or Registry()
    secret = registry.get(catalog().lookup("", "v1", "secrets"), namespace, name)
    out = {k: base64.b64decode(v).decode(errors="replace") for k, v in (secret.get("data") or {}).items()}
    out.update(secret.get("stringData") or {})
    return out


def repository_dir(repo: dict) -> Path:
    """The local git directory holding the repository's objects."""
    meta = repo["metadata"]
    if not (repo.get("spec") or {}).get("url"):
        branch = ((repo.get("spec") or {}).get("ref") or {}).get("branch") or "main"
        return gitstore.ensure_hosted(meta["namespace"], meta["name"], branch)
    return gitstore.mirror_path(meta["namespace"], meta["name"])


def syncs_of(namespace: str, name: str, registry: Registry | None = None) -> list[dict]:
    registry = registry or Registry()
    items = registry.list(sync_type(), namespace)["items"]
    return [s for s in items if ((s.get("spec") or {}).get("sourceRef") or {}).get("name") == name]


def reconcile_repository(namespace: str, name: str, registry: Registry | None = None) -> float | None:
    """One pass; returns seconds until the next poll (None: no periodic run)."""
    registry = registry or Registry()
    rt = repository_type()
    try:
        repo = registry.get(rt, namespace, name)
    except errors.StatusError as exc:
        if exc.code == 404:
            return None
        raise
    meta, spec = repo["metadata"], repo.get("spec") or {}
    if meta.get("deletionTimestamp"):
        _finalize(repo, registry)
        return None
    interval = parse_duration(spec.get("interval"), 60.0)
    if spec.get("suspend"):
        return None
    generation = meta.get("generation")
    if spec.get("url"):
        try:
            check_url(spec["url"])
        except SourceRefused as exc:
            _refuse(repo, str(exc), registry)
            return interval
    _mark_reconciling(repo, registry)
    try:
        if spec.get("url"):
            credentials = None
            if (spec.get("secretRef") or {}).get("name"):
                credentials = GitCredentials.from_secret(secret_data(namespace, spec["secretRef"]["name"], registry))
            path = gitstore.fetch_mirror(namespace, name, spec["url"], credentials,
                                         timeout=parse_duration(spec.get("timeout"), 60.0))
        else:
            path = repository_dir(repo)
        sha, revision = gitstore.resolve(path, spec.get("ref"))
        commit = gitstore.commit_info(path, sha)
    except gitstore.RefNotFound as exc:
        if spec.get("url"):
            return _fetch_failed(rt, repo, f"fetch failed: {exc}", generation, interval, registry)
        _await_push(rt, repo, str(exc), generation, registry)
        return None
    except (gitstore.GitError, errors.StatusError, OSError) as exc:
        message = f"fetch failed: {exc.status.get('message') if isinstance(exc, errors.StatusError) else exc}"
        return _fetch_failed(rt, repo, message, generation, interval, registry)

    old = ((repo.get("status") or {}).get("artifact") or {}).get("revision")
    # A new spec (e.g. spec.ignore) changes what the Syncs render, as a new revision does.
    changed = old != revision or (repo.get("status") or {}).get("observedGeneration") != generation

    def ready(status: dict) -> None:
        artifact = status.get("artifact") or {}
        if artifact.get("revision") != revision:
            status["artifact"] = {"revision": revision, "lastUpdateTime": now_rfc3339(),
                                  "message": commit.message, "author": commit.author}
        set_condition(status, "Ready", "True", "Succeeded", f"stored artifact for revision '{revision}'",
                      generation)
        status["conditions"] = [c for c in status["conditions"] if c["type"] not in ("Stalled", "Reconciling")]
        status["observedGeneration"] = generation
        status["url"] = spec.get("url") or f"/git/{namespace}/{name}.git"

    update_status(rt, namespace, name, ready, registry)
    if changed:
        for sync in syncs_of(namespace, name, registry):
            controllers.request(controllers.SYNC, namespace, sync["metadata"]["name"], "revision")
    return interval if spec.get("url") else None


def _refuse(repo: dict, message: str, registry: Registry) -> None:
    """Ready=False and Stalled=True, Flux's ``AccessDenied``: only a new
    ``spec.url`` (or an administrator's setting) can fix it. Nothing is fetched,
    and a previous artifact is withdrawn so that no Sync applies it again."""
    meta = repo["metadata"]
    generation = meta.get("generation")

    def refused(status: dict) -> None:
        set_condition(status, "Ready", "False", "AccessDenied", message, generation)
        set_condition(status, "Stalled", "True", "AccessDenied", message, generation)
        status["conditions"] = [c for c in status["conditions"] if c["type"] != "Reconciling"]
        status.pop("artifact", None)
        status["observedGeneration"] = generation

    update_status(repository_type(), meta["namespace"], meta["name"], refused, registry)
def _fetch_failed(rt, repo: dict, message: str, generation, interval: float, registry: Registry) -> float:
    """Ready=False GitOperationFailed; retried within 30 s."""

    def failed(status: dict) -> None:
        # Unreachable, refused credentials, a missing ref: all fixable
        # outside the spec, so retried, never Stalled (the schema refuses
        # what only a spec change could fix: URL scheme, commit format).
        set_condition(status, "Ready", "False", "GitOperationFailed", message, generation)
        status["conditions"] = [c for c in status["conditions"] if c["type"] not in ("Stalled", "Reconciling")]
        status["observedGeneration"] = generation

    meta = repo["metadata"]
    update_status(rt, meta["namespace"], meta["name"], failed, registry)
    return min(interval, 30.0)


def _await_push(rt, repo: dict, missing: str, generation, registry: Registry) -> None:
    """A hosted repository whose ref has no commit yet: the normal state of a new
    one, not a failure. Ready=Unknown (AwaitingPush) naming where to push; the
    push itself wakes the repository (no polling)."""
    meta = repo["metadata"]
    url = f"/git/{meta['namespace']}/{meta['name']}.git"
    message = f"waiting for the first push to {url} ({missing})"

    def waiting(status: dict) -> None:
        set_condition(status, "Ready", "Unknown", AWAITING_PUSH, message, generation)
        status["conditions"] = [c for c in status["conditions"] if c["type"] not in ("Stalled", "Reconciling")]
        status["observedGeneration"] = generation
        status["url"] = url

    before = next((c for c in (repo.get("status") or {}).get("conditions") or () if c.get("type") == "Ready"), {})
    update_status(rt, meta["namespace"], meta["name"], waiting, registry)
    if before.get("reason") != AWAITING_PUSH:
        # Once: the Syncs of the repository then read it as waiting, not failed.
        for sync in syncs_of(meta["namespace"], meta["name"], registry):
            controllers.request(controllers.SYNC, meta["namespace"], sync["metadata"]["name"], "revision")


def _mark_reconciling(repo: dict, registry: Registry) -> None:
    """Reconciling=True (Progressing) while a new generation, a first fetch or a
    retry after a failure runs; the end of the pass removes it. A routine poll
    of a Ready repository, or of one still awaiting its first push, writes
    nothing unless it finds a new revision."""
    meta, spec, status = repo["metadata"], repo.get("spec") or {}, repo.get("status") or {}
    generation = meta.get("generation")
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), {})
    if status.get("observedGeneration") == generation and (
        (ready.get("status") == "True" and (status.get("artifact") or {}).get("revision"))
        or ready.get("reason") == AWAITING_PUSH
    ):
        return
    source = spec.get("url") or f"/git/{meta['namespace']}/{meta['name']}.git"
    message = f"Fetching {source} with a timeout of {spec.get('timeout') or '60s'}"

    def start(st: dict) -> None:
        set_condition(st, "Reconciling", "True", "Progressing", message, generation)
        # Observed: the change stream must not take this write for a new spec.
        st["observedGeneration"] = generation
        if ready.get("status") != "False":
            set_condition(st, "Ready", "Unknown", "Progressing", "Reconciliation in progress", generation)

    update_status(repository_type(), meta["namespace"], meta["name"], start, registry)


def _finalize(repo: dict, registry: Registry) -> None:
    """Let the GitRepository go: its hosted repository is retained (restorable,
    ``sync.retention``) before the finalizer is dropped, so a crash in between
    leaves it to the next pass rather than in place for a namesake to inherit;
    a mirror of a remote repository is removed (it can be fetched again)."""
    from sync.kinds import FINALIZER
    from sync.retention import retain

    meta = repo["metadata"]
    retain(meta["namespace"], meta["name"])

    def drop(obj: dict) -> dict:
        obj["metadata"]["finalizers"] = [f for f in obj["metadata"].get("finalizers") or [] if f != FINALIZER]
        return obj

    try:
        registry.update_with(repository_type(), meta["namespace"], meta["name"], drop)
    except errors.StatusError as exc:
        if exc.code != 404:
            raise
    shutil.rmtree(gitstore.mirror_path(meta["namespace"], meta["name"]), ignore_errors=True)
    controllers.forget(controllers.REPOSITORY, meta["namespace"], meta["name"])
