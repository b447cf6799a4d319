"""Reconciling a Sync: from the source's revision to applied objects and status.

The recipe, one run at a time per Sync (``sync.queue``):

1. deleting? prune the inventory (``prune: true``), then drop the finalizer;
2. suspended? nothing (resuming requests a run, which takes the latest revision);
3. source artifact and ``dependsOn`` ready? else a condition and a retry;
4. nothing new (same revision, same tree under ``spec.path``, same generation,
   no drift, no new ``requestedAt``)? write nothing; a new revision whose tree
   under the path is unchanged only records the revision (monorepos);
5. render, plan, validate everything (apply nothing if anything fails), apply,
   prune what the previous inventory had and the new set lacks;
6. status: inventory, counts, conditions, revisions; an Event when something changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from kapi import errors
from kapi.auth import access
from kapi.registry.store import Registry
from sync import apply as engine
from sync import gitstore, queue
from sync.api import FINALIZER, REQUESTED_AT, parse_duration, repository_type, sync_type
from sync.render import RenderError, render
from sync.source import repository_dir
from sync.status import event, remove_condition, set_condition, update_status

__all__ = ["load_objects", "reconcile_sync"]

Progress = Callable[[str], None]


def _noop(_: str) -> None:
    pass


def _digest(tree: str, spec: dict, ignore: str | None = None) -> str:
    relevant = {k: spec.get(k) for k in ("path", "targetNamespace", "prune", "force")}
    if ignore:
        relevant["ignore"] = ignore  # the source's spec.ignore changes what is rendered
    return hashlib.sha1((tree + json.dumps(relevant, sort_keys=True)).encode()).hexdigest()


def load_objects(repo: dict, sha: str, spec: dict) -> list[dict]:
    """Render ``spec.path`` of the shared checkout of ``sha`` (RenderError, GitError)."""
    meta = repo["metadata"]
    path = repository_dir(repo)
    tree = gitstore.checkout(path, meta["namespace"], meta["name"], sha)
    return render(tree, spec.get("path") or "./", (repo.get("spec") or {}).get("ignore"))


def reconcile_sync(namespace: str, name: str, reason: str = "", drift: bool = False,
                   registry: Registry | None = None, progress: Progress = _noop) -> float | None:
    """One pass; returns seconds until the next periodic run (None: none)."""
    registry = registry or Registry()
    rt = sync_type()
    try:
        sync = registry.get(rt, namespace, name)
    except errors.StatusError as exc:
        if exc.code == 404:
            queue.forget(queue.SYNC, namespace, name)
            return None
        raise
    meta, spec = sync["metadata"], sync.get("spec") or {}
    status = sync.get("status") or {}
    generation = meta.get("generation")
    interval = parse_duration(spec.get("interval"), 600.0)
    retry = parse_duration(spec.get("retryInterval"), min(interval, 30.0))
    if meta.get("deletionTimestamp"):
        return _finalize(sync, registry, progress)
    if spec.get("suspend"):
        progress("suspended")
        return None
    requested_at = (meta.get("annotations") or {}).get(REQUESTED_AT)
    new_request = bool(requested_at) and requested_at != status.get("lastHandledReconcileAt")

    def fail(reason_: str, message: str, revision: str | None = None) -> float:
        progress(f"{reason_}: {message}")

        def change(st: dict) -> None:
            set_condition(st, "Ready", "False", reason_, message, generation)
            remove_condition(st, "Reconciling")
            st["observedGeneration"] = generation
            if revision:
                st["lastAttemptedRevision"] = revision
            if requested_at:
                st["lastHandledReconcileAt"] = requested_at

        before = (sync.get("status") or {}).get("conditions")
        update_status(rt, namespace, name, change, registry)
        ready = next((c for c in before or [] if c.get("type") == "Ready"), {})
        if ready.get("reason") != reason_ or ready.get("message") != message[:4096]:
            event(sync, "Warning", reason_, message, registry)
        return retry

    # -- source and dependencies ------------------------------------------------
    source = (spec.get("sourceRef") or {}).get("name", "")
    try:
        repo = registry.get(repository_type(), namespace, source)
    except errors.StatusError as exc:
        if exc.code != 404:
            raise
        return fail("ArtifactFailed", f"GitRepository {namespace}/{source} not found")
    revision = ((repo.get("status") or {}).get("artifact") or {}).get("revision")
    if not revision:
        queue.request(queue.REPOSITORY, namespace, source, "sync")
        return fail("ArtifactFailed", f"GitRepository {namespace}/{source} has no artifact yet")
    for dep in spec.get("dependsOn") or []:
        try:
            other = registry.get(rt, namespace, dep.get("name", ""))
        except errors.StatusError as exc:
            if exc.code != 404:
                raise
            return fail("DependencyNotReady", f"dependency {namespace}/{dep.get('name')} not found")
        ostatus = other.get("status") or {}
        ready = next((c for c in ostatus.get("conditions") or [] if c.get("type") == "Ready"), {})
        if ready.get("status") != "True" or ostatus.get("observedGeneration") != other["metadata"].get("generation"):
            return fail("DependencyNotReady", f"dependency {namespace}/{dep.get('name')} is not ready")

    sha = revision.rsplit("sha1:", 1)[-1]
    try:
        tree = gitstore.tree_id(repository_dir(repo), sha, spec.get("path") or "./")
    except (gitstore.GitError, OSError) as exc:
        return fail("ArtifactFailed", f"cannot read revision {revision}: {exc}", revision)
    digest = _digest(tree, spec, (repo.get("spec") or {}).get("ignore"))
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), {})
    settled = (
        ready.get("status") == "True"
        and status.get("observedGeneration") == generation
        and status.get("lastAppliedDigest") == digest
        and not drift
        and not new_request
    )
    if settled and status.get("lastAppliedRevision") == revision:
        progress("up to date")
        return interval
    if settled:
        # A commit elsewhere in the repository: record the revision only.
        def record(st: dict) -> None:
            st["lastAppliedRevision"] = st["lastAttemptedRevision"] = revision
            set_condition(st, "Ready", "True", "ReconciliationSucceeded",
                          f"Applied revision: {revision}", generation)

        update_status(rt, namespace, name, record, registry)
        progress(f"revision {revision} does not change {spec.get('path') or './'}")
        return interval

    # -- render, validate, apply, prune ----------------------------------------------
    progress(f"rendering {spec.get('path') or './'} at {revision}")
    try:
        objects = load_objects(repo, sha, spec)
    except RenderError as exc:
        return fail("BuildFailed", "; ".join(exc.messages[:20]), revision)
    except (gitstore.GitError, OSError) as exc:
        return fail("ArtifactFailed", f"cannot check out {revision}: {exc}", revision)
    entries, problems = engine.plan(objects, namespace, name, spec.get("targetNamespace") or "")
    # With spec.serviceAccountName the Sync acts as that ServiceAccount: RBAC
    # decides what it may apply and prune, and nothing is applied if any object
    # is forbidden. Without it, it acts as the sync controller.
    account = spec.get("serviceAccountName")
    user = access.service_account(namespace, account) if account else None
    writer = access.registry_for(user) if user is not None else registry
    if user is not None:
        denied = engine.authorize(entries, user, registry)
        if denied:
            return fail("ReconciliationFailed", "; ".join(str(p) for p in denied[:20]), revision)
    if status.get("lastAppliedDigest") != digest or status.get("observedGeneration") != generation:
        # Same input as the last successful apply needs no second dry-run
        # (drift and requestedAt runs re-apply it; apply itself still validates).
        progress(f"validating {len(entries)} objects")
        problems += engine.validate(entries, namespace, name, writer)
    if problems:
        return fail("ValidationFailed", "; ".join(str(p) for p in problems[:20])
                    + (f" (and {len(problems) - 20} more)" if len(problems) > 20 else ""), revision)
    progress(f"applying {len(entries)} objects")
    try:
        outcome = engine.apply(entries, force_recreate=bool(spec.get("force")), registry=writer,
                               progress=progress)
    except errors.StatusError as exc:
        return fail("ReconciliationFailed", f"apply failed: {exc.status.get('message')}", revision)
    old_inventory = (status.get("inventory") or {}).get("entries") or []
    new_inventory = engine.inventory_entries(entries)
    if spec.get("prune", True):
        try:
            engine.prune(old_inventory, {e["id"] for e in new_inventory}, namespace, name, outcome,
                         writer, user=user)
        except errors.StatusError as exc:
            return fail("PruneFailed", f"prune failed: {exc.status.get('message')}", revision)
    progress(f"applied {outcome.applied}, unchanged {outcome.unchanged}, pruned {outcome.pruned}")
    message = f"Applied revision: {revision}"

    def succeeded(st: dict) -> None:
        set_condition(st, "Ready", "True", "ReconciliationSucceeded", message, generation)
        remove_condition(st, "Reconciling")
        remove_condition(st, "Stalled")
        st["observedGeneration"] = generation
        st["lastAppliedRevision"] = st["lastAttemptedRevision"] = revision
        st["lastAppliedDigest"] = digest
        st["inventory"] = {"entries": new_inventory}
        if outcome.applied or outcome.pruned or "applied" not in st:
            st.update(applied=outcome.applied, unchanged=outcome.unchanged, pruned=outcome.pruned)
        if requested_at:
            st["lastHandledReconcileAt"] = requested_at

    update_status(rt, namespace, name, succeeded, registry)
    if outcome.applied or outcome.pruned or ready.get("status") != "True":
        event(sync, "Normal", "ReconciliationSucceeded",
              f"{message}: {outcome.applied} applied, {outcome.unchanged} unchanged, {outcome.pruned} pruned",
              registry)
    return interval


def _finalize(sync: dict, registry: Registry, progress: Progress) -> float | None:
    meta, spec = sync["metadata"], sync.get("spec") or {}
    namespace, name = meta["namespace"], meta["name"]
    if FINALIZER not in (meta.get("finalizers") or []):
        return None
    inventory = ((sync.get("status") or {}).get("inventory") or {}).get("entries") or []
    if spec.get("prune", True) and inventory:
        progress(f"deleting {len(inventory)} inventory objects")
        engine.prune(inventory, set(), namespace, name, registry=registry)

    def drop(obj: dict) -> dict:
        obj["metadata"]["finalizers"] = [f for f in obj["metadata"].get("finalizers") or [] if f != FINALIZER]
        return obj

    try:
        registry.update_with(sync_type(), namespace, name, drop)
    except errors.StatusError as exc:
        if exc.code != 404:
            raise
    queue.forget(queue.SYNC, namespace, name)
    progress("deleted")
    return None


