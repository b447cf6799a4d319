"""Reconciling a Sync: from the source's revision to applied objects and status.

The recipe, one run at a time per Sync (``sync.queue``):

1. deleting? prune the inventory (``prune: true``), then drop the finalizer;
2. suspended? nothing (resuming requests a run, which takes the latest revision);
   a spec only a spec change can fix (path outside the repository)? Stalled;
3. source artifact and ``dependsOn`` ready? else a condition and a retry;
4. a ``spec.wait`` health check pending for this same input? only check the
   objects again (``sync.health``), see ``await_health``;
5. nothing new (same revision, same tree under ``spec.path``, same generation,
   no drift, no new ``requestedAt``)? write nothing; a new revision whose tree
   under the path is unchanged only records the revision (monorepos);
6. Reconciling=True; render, plan, validate everything (apply nothing if
   anything fails), apply (re-applying the last applied input, only what
   drifted), prune what the previous inventory had and the new set lacks, all
   within ``spec.timeout``;
7. ``spec.wait``? wait for health without holding the worker;
8. status: inventory, counts, conditions, revisions; an Event when something changed.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import time
from collections.abc import Callable
from datetime import UTC, datetime

from kapi import errors
from kapi.auth import access
from kapi.registry.catalog import catalog
from kapi.registry.store import Registry
from sync import apply as engine
from sync import gitstore, health, history, postbuild, pruneguard, queue, sops
from sync.api import FINALIZER, REQUESTED_AT, parse_duration, repository_type, sync_type
from sync.identity import identity
from sync.render import IGNORE_FILE, RenderError, render
from sync.source import AWAITING_PUSH, repository_dir
from sync.status import event, remove_condition, set_condition, update_status

__all__ = ["load_objects", "reconcile_sync"]

Progress = Callable[[str], None]
def _health_poll() -> float:
    """Seconds between health checks while a Sync waits for its objects
    (``spec.wait``): a safety net only, since a write of a waited-on object
    wakes the check at once (``sync.healthwake``)."""
    from django.conf import settings

    return settings.SYNC_HEALTH_POLL_SECONDS


def _noop(_: str) -> None:
    pass


def _digest(tree: str, spec: dict, ignore: str | None = None) -> str:
    relevant = {k: spec.get(k) for k in ("path", "targetNamespace", "prune", "force", "driftIgnoreRules",
                                         "postBuild", "decryption")}
    if ignore:
        relevant["ignore"] = ignore  # the source's spec.ignore changes what is rendered
    return hashlib.sha1((tree + json.dumps(relevant, sort_keys=True)).encode()).hexdigest()


#: Files that make a render read beyond its path: a kustomization (``../base``,
#: components, patches) and symlinks.
_KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml", "Kustomization")
_SYMLINK = "120000"


def _rendered_tree(repo_dir, sha: str, path: str) -> str:
    """What the render of ``path`` at ``sha`` depends on: the path's tree and the
    ``.sourceignore`` files of the directories above it (whose patterns reach
    into it), so a commit changing only those still re-renders the Sync. A path
    whose render can read outside it (a kustomization, a symlink) depends on
    the whole repository: a commit that changes only its ``../base`` is applied."""
    rel = posixpath.normpath(path or ".").lstrip("/")
    parts = [] if rel in (".", "") else rel.split("/")
    ids = [gitstore.tree_id(repo_dir, sha, path)]
    ids += [gitstore.tree_id(repo_dir, sha, "/".join([*parts[:i], IGNORE_FILE])) for i in range(len(parts))]
    if parts and any(mode == _SYMLINK or posixpath.basename(name) in _KUSTOMIZATIONS
                     for mode, name in gitstore.ls_tree(repo_dir, sha, path)):
        ids.append(gitstore.tree_id(repo_dir, sha, "."))
    return ":".join(ids)


def _rfc3339(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _epoch(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()


def _unhealthy(inventory: list[dict], registry: Registry, user) -> tuple[list[str], list[str]]:
    """(failed, in progress): the inventory objects that are not healthy by kstatus
    rules, each as ``Kind/namespace/name status: 'InProgress': message``. The
    Sync's identity ``user`` must be allowed to get each (kube's 403 text
    otherwise, a failure: the check cannot see the object)."""
    served = catalog(fresh=True)
    entries: list[engine.Entry] = []
    failed: list[str] = []
    waiting: list[str] = []
    for item in inventory:
        try:
            namespace, name, group, kind, version = engine.parse_id(item)
        except ValueError:
            continue
        rt = served.for_kind(group, version, kind)
        if rt is not None:
            try:
                access.check(user, "get", rt, namespace, name)
            except errors.StatusError as exc:
                failed.append(exc.status.get("message", "forbidden"))
                continue
        entries.append(engine.Entry({}, group, version, kind, namespace, name, rt))
    live = engine.live_objects(entries, registry)
    for entry in entries:
        verdict = health.compute(live.get(entry.id))
        if verdict.healthy:
            continue
        where = f"{entry.kind}/{entry.namespace + '/' if entry.namespace else ''}{entry.name}"
        line = f"{where} status: '{verdict.status}': {verdict.message}"
        (failed if verdict.status == health.FAILED else waiting).append(line)
    return failed, waiting


def _listing(lines: list[str], limit: int = 10) -> str:
    more = f", and {len(lines) - limit} more" if len(lines) > limit else ""
    return "[" + ", ".join(lines[:limit]) + more + "]"


def _problems(problems: list[engine.Problem], limit: int = 20) -> str:
    more = f" (and {len(problems) - limit} more)" if len(problems) > limit else ""
    return "; ".join(str(p) for p in problems[:limit]) + more


def load_objects(repo: dict, sha: str, spec: dict, deadline: float | None = None) -> list[dict]:
    """Render ``spec.path`` of the shared checkout of ``sha`` (RenderError,
    TimeoutExceeded, GitError)."""
    meta = repo["metadata"]
    path = repository_dir(repo)
    with gitstore.checked_out(path, meta["namespace"], meta["name"], sha) as tree:
        return render(tree, spec.get("path") or "./", (repo.get("spec") or {}).get("ignore"), deadline)


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
    # Everything below acts as the Sync's ServiceAccount (sync.identity).
    user = identity(namespace, spec)
    writer = access.registry_for(user)

    rendered: dict[str, str] = {}  # the digest of this attempt's rendered objects, once rendered
    limit = int(spec.get("historyLimit") or history.DEFAULT_LIMIT)

    def remember(st: dict, revision_: str, outcome_: str, result: engine.Outcome | None = None) -> None:
        history.record(st, revision=revision_, digest=rendered.get("digest", ""), outcome=outcome_,
                       limit=limit, applied=result.applied if result else 0,
                       pruned=result.pruned if result else 0, changed=result.changed if result else None)

    def fail(reason_: str, message: str, revision: str | None = None,
             record: Callable[[dict], None] | None = None, stalled: bool = False,
             warn: bool = True) -> float | None:
        """Ready=False and the end of this attempt: retried at the retry interval,
        or, ``stalled``, not until the spec changes (Flux's Stalled=True). A
        Warning event unless ``warn`` is false (a state, not a failure)."""
        progress(f"{reason_}: {message}")

        def change(st: dict) -> None:
            if record is not None:
                record(st)
            if revision:
                remember(st, revision, reason_)
            set_condition(st, "Ready", "False", reason_, message, generation)
            remove_condition(st, "Reconciling")
            if stalled:
                set_condition(st, "Stalled", "True", reason_, message, generation)
            else:
                remove_condition(st, "Stalled")
            st.pop("healthCheckDeadline", None)
            st["observedGeneration"] = generation
            if revision:
                st["lastAttemptedRevision"] = revision
            if requested_at:
                st["lastHandledReconcileAt"] = requested_at

        before = (sync.get("status") or {}).get("conditions")
        update_status(rt, namespace, name, change, registry)
        ready = next((c for c in before or [] if c.get("type") == "Ready"), {})
        if warn and (ready.get("reason") != reason_ or ready.get("message") != message[:4096]):
            event(sync, "Warning", reason_, message, registry)
        return None if stalled else retry

    # -- what only a spec change can fix (Stalled) ------------------------------------
    path = spec.get("path") or "./"
    if posixpath.normpath(path.lstrip("/")).split("/")[0] == "..":
        return fail("BuildFailed", f"spec.path {path!r} is outside the repository", stalled=True)
    if any(dep.get("name") == name for dep in spec.get("dependsOn") or []):
        return fail("DependencyNotReady", f"Sync {namespace}/{name} depends on itself", stalled=True)

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
        # Flux's kustomize-controller only logs this (no event): a source without
        # an artifact yet is a state to wait out, and for a new hosted repository
        # the normal one until its first push.
        queue.request(queue.REPOSITORY, namespace, source, "sync")
        ready = next((c for c in (repo.get("status") or {}).get("conditions") or () if c.get("type") == "Ready"), {})
        if ready.get("reason") == AWAITING_PUSH:
            return fail("ArtifactFailed", f"GitRepository {namespace}/{source} is waiting for its first push",
                        warn=False)
        return fail("ArtifactFailed", f"GitRepository {namespace}/{source} has no artifact yet", warn=False)
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
    # -- a rollback pins an earlier commit (sync.history) ------------------------
    pin = history.pin_of(meta)
    pinned = status.get("pin") or {}
    if pin and pinned.get("revision", "").startswith(pin) and pinned.get("sourceRevision") != revision:
        _unpin(sync, registry, f"a new revision {revision} was pushed")
        pin, pinned = "", {}
    if not pin and pinned:
        update_status(rt, namespace, name, lambda st: st.pop("pin", None), registry)
    if pin:
        try:
            pinned_sha = gitstore.resolve(repository_dir(repo), {"commit": pin})[0]
        except (gitstore.GitError, OSError) as exc:
            return fail("ArtifactFailed", f"pinned revision {pin}: {exc}", stalled=True)
        if pinned.get("revision") != pinned_sha:
            source_revision = revision

            def pinning(st: dict) -> None:
                st["pin"] = {"revision": pinned_sha, "sourceRevision": source_revision}

            update_status(rt, namespace, name, pinning, registry)
            event(sync, "Normal", "Pinned", f"pinned to {pinned_sha} (source at {revision})", registry)
        revision, sha = f"{revision.rsplit('@sha1:', 1)[0]}@sha1:{pinned_sha}", pinned_sha
    try:
        tree = _rendered_tree(repository_dir(repo), sha, spec.get("path") or "./")
    except (gitstore.GitError, OSError) as exc:
        return fail("ArtifactFailed", f"cannot read revision {revision}: {exc}", revision)
    try:
        values = postbuild.variables(namespace, spec, user, registry) if spec.get("postBuild") else {}
    except postbuild.SubstitutionError as exc:
        return fail("BuildFailed", "; ".join(exc.messages[:20]), revision)
    # The variables' values are an input of the render as much as the tree is.
    digest = _digest(tree + ":" + postbuild.digest(values), spec, (repo.get("spec") or {}).get("ignore"))
    ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), {})
    timeout_text = spec.get("timeout") or spec.get("interval") or "10m"
    timeout = parse_duration(spec.get("timeout"), interval)
    pending = status.get("healthCheckDeadline")
    same_attempt = (
        status.get("lastAppliedDigest") == digest
        and status.get("lastAttemptedRevision") == revision
        and status.get("observedGeneration") == generation
        and not new_request
    )

    def applied_state(inventory: list[dict], outcome: engine.Outcome | None) -> Callable[[dict], None]:
        """What an apply leaves in status whatever the health checks say."""

        def record(st: dict) -> None:
            st["observedGeneration"] = generation
            st["lastAttemptedRevision"] = revision
            st["lastAppliedDigest"] = digest
            st["inventory"] = {"entries": inventory}
            if outcome is not None and (outcome.applied or outcome.pruned or "applied" not in st):
                st.update(applied=outcome.applied, unchanged=outcome.unchanged, pruned=outcome.pruned)
            if requested_at:
                st["lastHandledReconcileAt"] = requested_at

        return record

    def succeed(inventory: list[dict], outcome: engine.Outcome | None) -> float:
        message = f"Applied revision: {revision}"
        record = applied_state(inventory, outcome)

        def succeeded(st: dict) -> None:
            record(st)
            remember(st, revision, "ReconciliationSucceeded", outcome)
            set_condition(st, "Ready", "True", "ReconciliationSucceeded", message, generation)
            remove_condition(st, "Reconciling")
            remove_condition(st, "Stalled")
            st.pop("healthCheckDeadline", None)
            st["lastAppliedRevision"] = revision

        update_status(rt, namespace, name, succeeded, registry)
        changed = outcome is not None and (outcome.applied or outcome.pruned)
        if changed or ready.get("status") != "True":
            counts = "" if outcome is None else (
                f": {outcome.applied} applied, {outcome.unchanged} unchanged, {outcome.pruned} pruned")
            event(sync, "Normal", "ReconciliationSucceeded", f"{message}{counts}", registry)
        return interval

    def await_health(deadline: float, inventory: list[dict], outcome: engine.Outcome | None) -> float:
        """``spec.wait``: Ready once every applied object is healthy. Not a loop:
        while objects are in progress the state goes to status (the deadline in
        ``healthCheckDeadline``) and the queue runs this check again shortly, so
        a waiting Sync never holds a worker."""
        failed, waiting = _unhealthy(inventory, registry, user)
        if not failed and not waiting:
            return succeed(inventory, outcome)
        record = applied_state(inventory, outcome)
        if failed:
            return fail("HealthCheckFailed", f"health check failed: {_listing(failed + waiting)}",
                        revision, record)
        if time.time() >= deadline:
            return fail("HealthCheckFailed",
                        f"health check failed after {timeout_text}: timeout waiting for: {_listing(waiting)}",
                        revision, record)
        progress(f"waiting for {len(waiting)} objects: {_listing(waiting, 3)}")

        def progressing(st: dict) -> None:
            record(st)
            set_condition(st, "Ready", "Unknown", "Progressing", "Reconciliation in progress", generation)
            set_condition(st, "Reconciling", "True", "Progressing",
                          f"Waiting for {len(waiting)} of {len(inventory)} objects to become ready: "
                          f"{_listing(waiting)}", generation)
            st["healthCheckDeadline"] = _rfc3339(deadline)

        update_status(rt, namespace, name, progressing, registry)
        # A status write between the check above and healthCheckDeadline being
        # stored found no waiting Sync to wake: look once more now that it is.
        if _unhealthy(inventory, registry, user) != (failed, waiting):
            return 0.1
        return max(0.1, min(_health_poll(), deadline - time.time()))

    if pending and same_attempt and not drift and spec.get("wait"):
        # A health check in progress: only look at the objects again.
        return await_health(_epoch(pending), (status.get("inventory") or {}).get("entries") or [], None)
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
    # The whole pass (render, validate, apply, prune and health checks) is bounded by
    # spec.timeout; a drift correction during a health check keeps its deadline.
    deadline = _epoch(pending) if pending and same_attempt else time.time() + timeout

    def timed_out(exc: engine.TimeoutExceeded, reason_: str = "ReconciliationFailed") -> float:
        return fail(reason_,
                    f"timeout of {timeout_text} exceeded while {exc.stage} revision {revision}: "
                    f"{exc.done} of {exc.total} {exc.unit} done", revision)

    # -- render, validate, apply, prune ----------------------------------------------
    # Reconciling=True while this attempt runs (Flux's kstatus convention);
    # Ready goes Unknown only for new input, not for a drift correction or a
    # requested re-apply of what is already Ready.
    new_input = not (
        ready.get("status") == "True"
        and status.get("lastAppliedDigest") == digest
        and status.get("lastAppliedRevision") == revision
        and status.get("observedGeneration") == generation
    )

    def started(st: dict) -> None:
        set_condition(st, "Reconciling", "True", "Progressing",
                      f"Applying revision {revision} with a timeout of {timeout_text}", generation)
        remove_condition(st, "Stalled")
        # Observed: the change stream must not take this write for a new spec.
        st["observedGeneration"] = generation
        st.pop("pruneHeldRevision", None)
        if st.get("lastAppliedDigest") != digest:
            # Applying other input: until it is all applied, no object may be
            # taken for "applied as this digest says" (see reapply below),
            # even if the worker dies mid-way.
            st.pop("lastAppliedDigest", None)
        if new_input and not pending:
            set_condition(st, "Ready", "Unknown", "Progressing", "Reconciliation in progress", generation)

    update_status(rt, namespace, name, started, registry)
    progress(f"rendering {spec.get('path') or './'} at {revision}")
    try:
        objects = load_objects(repo, sha, spec, deadline)
        # Digested as rendered: never a hash of decrypted values in status.
        rendered["digest"] = history.digest_of(objects)
        if spec.get("decryption"):
            objects = sops.decrypt_objects(objects, sops.identities(namespace, spec, user, registry))
        objects = postbuild.substitute(objects, values, bool(spec.get("postBuild")))
    except engine.TimeoutExceeded as exc:
        return timed_out(exc, "BuildFailed")
    except (RenderError, postbuild.SubstitutionError, sops.DecryptionError) as exc:
        return fail("BuildFailed", "; ".join(exc.messages[:20]), revision)
    except (gitstore.GitError, OSError) as exc:
        return fail("ArtifactFailed", f"cannot check out {revision}: {exc}", revision)
    entries, problems = engine.plan(objects, namespace, name, spec.get("targetNamespace") or "",
                                    spec.get("driftIgnoreRules"))
    old_inventory = (status.get("inventory") or {}).get("entries") or []
    new_inventory = engine.inventory_entries(entries)
    doomed = engine.doomed(old_inventory, {e["id"] for e in new_inventory}) if spec.get("prune", True) else []
    # Nothing is applied unless the Sync's identity may apply and prune all of it.
    denied = engine.authorize(entries, user, registry) + engine.authorize_prune(doomed, user)
    if denied:
        return fail("ReconciliationFailed", _problems(denied), revision)
    if status.get("lastAppliedDigest") != digest or status.get("observedGeneration") != generation:
        # Same input as the last successful apply needs no second dry-run
        # (drift and requestedAt runs re-apply it; apply itself still validates).
        progress(f"validating {len(entries)} objects")
        try:
            problems += engine.validate(entries, namespace, name, writer, deadline=deadline,
                                        force_recreate=bool(spec.get("force")))
        except engine.TimeoutExceeded as exc:
            return timed_out(exc)
    if problems:
        return fail("ValidationFailed", _problems(problems), revision)
    held = pruneguard.hold_message(doomed, len(old_inventory), len(new_inventory))
    if held and not pruneguard.allowed(meta, sha):
        return fail(pruneguard.REASON,
                    f"revision {revision} would {held}; nothing applied. To apply it: kubectl annotate "
                    f"sync {name} -n {namespace} {pruneguard.ALLOW_ANNOTATION}={sha[:12]}",
                    revision, lambda st: st.__setitem__("pruneHeldRevision", sha))
    progress(f"applying {len(entries)} objects")
    try:
        outcome = engine.apply(entries, force_recreate=bool(spec.get("force")), registry=writer,
                               progress=progress, deadline=deadline,
                               reapply=status.get("lastAppliedDigest") == digest)
    except engine.TimeoutExceeded as exc:
        return timed_out(exc)
    except errors.StatusError as exc:
        return fail("ReconciliationFailed", f"apply failed: {exc.status.get('message')}", revision)
    if doomed:
        try:
            engine.prune(old_inventory, {e["id"] for e in new_inventory}, namespace, name, outcome,
                         writer, user=user, deadline=deadline)
        except engine.TimeoutExceeded as exc:
            return timed_out(exc, "PruneFailed")
        except errors.StatusError as exc:
            return fail("PruneFailed", f"prune failed: {exc.status.get('message')}", revision)
    progress(f"applied {outcome.applied}, unchanged {outcome.unchanged}, pruned {outcome.pruned}")
    if spec.get("wait"):
        return await_health(deadline, new_inventory, outcome)
    return succeed(new_inventory, outcome)


def _unpin(sync: dict, registry: Registry, why: str) -> None:
    """Drop the Sync's pin (annotation and ``status.pin``), saying why in an Event."""
    meta = sync["metadata"]

    def drop(obj: dict) -> dict:
        (obj["metadata"].get("annotations") or {}).pop(history.PIN_ANNOTATION, None)
        return obj

    registry.update_with(sync_type(), meta["namespace"], meta["name"], drop)
    update_status(sync_type(), meta["namespace"], meta["name"], lambda st: st.pop("pin", None), registry)
    event(sync, "Normal", "Unpinned", f"pin removed: {why}", registry)


def _finalize(sync: dict, registry: Registry, progress: Progress) -> float | None:
    meta, spec = sync["metadata"], sync.get("spec") or {}
    namespace, name = meta["namespace"], meta["name"]
    if FINALIZER not in (meta.get("finalizers") or []):
        return None
    inventory = ((sync.get("status") or {}).get("inventory") or {}).get("entries") or []
    if spec.get("prune", True) and inventory:
        progress(f"deleting {len(inventory)} inventory objects")
        # As the Sync's identity. What it may not delete stays (a Warning event
        # names it): a binding that the namespace's deletion removed first must
        # not hold the Sync forever, nor hand its prune to the controller.
        user = identity(namespace, spec)
        outcome = engine.prune(inventory, set(), namespace, name, registry=access.registry_for(user),
                               user=user, skip_forbidden=True)
        if outcome.forbidden:
            event(sync, "Warning", "PruneFailed",
                  f"{len(outcome.forbidden)} objects left in place: {_listing(outcome.forbidden, 5)}", registry)

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


