"""The stages of a Sync's pass, in the order ``sync.reconcile`` runs them.

Each takes the ``Attempt`` (and what the stage before it produced), returns
its own output or raises ``Failed``; none writes the Sync's status (that is
``sync.conclude``), though the pin stage edits the Sync's annotations and
records what the conclusion must write.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import time
from dataclasses import dataclass
from datetime import UTC, datetime

from kapi import errors
from sync import apply as engine
from sync import controllers, gitstore, history, postbuild, pruneguard, sops
from sync.attempt import Applied, Attempt, Failed, RevisionOnly, UpToDate, Waiting
from sync.conclude import listing
from sync.kinds import repository_type, sync_type
from sync.render import IGNORE_FILE, RenderError, render
from sync.source import AWAITING_PUSH, repository_dir
from sync.status import event
from sync.target import KubeconfigError, target_for

__all__ = [
    "TARGET_FAILED",
    "Plan",
    "apply_objects",
    "check_health",
    "connect",
    "inputs",
    "load_objects",
    "pin",
    "plan",
    "preflight",
    "prune",
    "render_objects",
    "shortcut",
    "source",
    "validate",
]

#: Ready=False reason of a target that cannot be used (kubeconfig refused, unreachable).
TARGET_FAILED = "TargetFailed"


# -- what only a spec change can fix (Stalled) -------------------------------------

def preflight(a: Attempt) -> None:
    if posixpath.normpath(a.path.lstrip("/")).split("/")[0] == "..":
        raise Failed("BuildFailed", f"spec.path {a.path!r} is outside the repository", stalled=True)
    if any(dep.get("name") == a.name for dep in a.spec.get("dependsOn") or []):
        raise Failed("DependencyNotReady", f"Sync {a.namespace}/{a.name} depends on itself", stalled=True)


# -- the target ---------------------------------------------------------------------

def connect(a: Attempt) -> None:
    """``a.target``: kapi's own store, or the API server of ``spec.kubeConfig``
    (``sync.target``), whose URL and version go to ``status.target``. Edits on
    a remote target are not in kapi's change log: each pass there re-applies
    what drifted (only that: ``sync.apply``'s unchanged check)."""
    try:
        a.target = target_for(a.namespace, a.spec, a.user, a.registry, a.writer)
        version = a.target.version
    except KubeconfigError as exc:
        raise Failed(TARGET_FAILED, str(exc)) from None
    except errors.StatusError as exc:
        raise Failed(TARGET_FAILED, exc.status.get("message", str(exc))) from None
    if a.target.server:
        record = {"server": a.target.server, "version": version}
        if a.status.get("target") != record:
            a.edits.append(lambda st: st.__setitem__("target", dict(record)))
    elif "target" in a.status:
        a.edits.append(lambda st: st.pop("target", None))


# -- source and dependencies ---------------------------------------------------------

def source(a: Attempt) -> None:
    """The GitRepository's artifact revision (``a.repo``, ``a.revision``, ``a.sha``),
    once every ``dependsOn`` Sync is Ready."""
    name = (a.spec.get("sourceRef") or {}).get("name", "")
    try:
        repo = a.registry.get(repository_type(), a.namespace, name)
    except errors.StatusError as exc:
        if exc.code != 404:
            raise
        raise Failed("ArtifactFailed", f"GitRepository {a.namespace}/{name} not found") from None
    revision = ((repo.get("status") or {}).get("artifact") or {}).get("revision")
    if not revision:
        # Flux's kustomize-controller only logs this (no event): a source without
        # an artifact yet is a state to wait out, and for a new hosted repository
        # the normal one until its first push.
        controllers.request(controllers.REPOSITORY, a.namespace, name, "sync")
        ready = next((c for c in (repo.get("status") or {}).get("conditions") or () if c.get("type") == "Ready"), {})
        if ready.get("reason") == AWAITING_PUSH:
            raise Failed("ArtifactFailed", f"GitRepository {a.namespace}/{name} is waiting for its first push",
                         warn=False)
        raise Failed("ArtifactFailed", f"GitRepository {a.namespace}/{name} has no artifact yet", warn=False)
    for dep in a.spec.get("dependsOn") or []:
        try:
            other = a.registry.get(sync_type(), a.namespace, dep.get("name", ""))
        except errors.StatusError as exc:
            if exc.code != 404:
                raise
            raise Failed("DependencyNotReady", f"dependency {a.namespace}/{dep.get('name')} not found") from None
        ostatus = other.get("status") or {}
        ready = next((c for c in ostatus.get("conditions") or [] if c.get("type") == "Ready"), {})
        if ready.get("status") != "True" or ostatus.get("observedGeneration") != other["metadata"].get("generation"):
            raise Failed("DependencyNotReady", f"dependency {a.namespace}/{dep.get('name')} is not ready")
    a.repo, a.revision, a.sha = repo, revision, revision.rsplit("sha1:", 1)[-1]


def pin(a: Attempt) -> None:
    """A rollback pins an earlier commit (``sync.history``): the pass then
    works on that commit. A new revision pushed since the pin unpins."""
    pinned_to = history.pin_of(a.meta)
    pinned = a.status.get("pin") or {}
    if pinned_to and pinned.get("revision", "").startswith(pinned_to) and pinned.get("sourceRevision") != a.revision:
        _unpin(a, f"a new revision {a.revision} was pushed")
        return
    if not pinned_to:
        if pinned:
            a.edits.append(lambda st: st.pop("pin", None))
        return
    try:
        pinned_sha = gitstore.resolve(repository_dir(a.repo), {"commit": pinned_to})[0]
    except (gitstore.GitError, OSError) as exc:
        raise Failed("ArtifactFailed", f"pinned revision {pinned_to}: {exc}", stalled=True) from None
    if pinned.get("revision") != pinned_sha:
        record = {"revision": pinned_sha, "sourceRevision": a.revision}
        a.edits.append(lambda st: st.__setitem__("pin", dict(record)))
        event(a.sync, "Normal", "Pinned", f"pinned to {pinned_sha} (source at {a.revision})", a.registry)
    a.revision, a.sha = f"{a.revision.rsplit('@sha1:', 1)[0]}@sha1:{pinned_sha}", pinned_sha


def _unpin(a: Attempt, why: str) -> None:
    """Drop the Sync's pin annotation (and, with the conclusion, ``status.pin``)."""

    def drop(obj: dict) -> dict:
        (obj["metadata"].get("annotations") or {}).pop(history.PIN_ANNOTATION, None)
        return obj

    a.registry.update_with(sync_type(), a.namespace, a.name, drop)
    a.edits.append(lambda st: st.pop("pin", None))
    event(a.sync, "Normal", "Unpinned", f"pin removed: {why}", a.registry)


# -- the input's digest, and what it lets the pass skip ------------------------------

def inputs(a: Attempt) -> None:
    """``a.digest``: of everything the render depends on (the trees it reads,
    the Sync's rendering fields, the source's ignore rules, postBuild values)."""
    try:
        tree = _rendered_tree(repository_dir(a.repo), a.sha, a.path)
    except (gitstore.GitError, OSError) as exc:
        raise Failed("ArtifactFailed", f"cannot read revision {a.revision}: {exc}", a.revision) from None
    try:
        a.variables = postbuild.variables(a.namespace, a.spec, a.user, a.registry) if a.spec.get("postBuild") else {}
    except postbuild.SubstitutionError as exc:
        raise Failed("BuildFailed", "; ".join(exc.messages[:20]), a.revision) from None
    # The variables' values are an input of the render as much as the tree is.
    a.digest = _digest(tree + ":" + postbuild.digest(a.variables), a.spec, (a.repo.get("spec") or {}).get("ignore"))


def shortcut(a: Attempt) -> Applied | Waiting | RevisionOnly | UpToDate | None:
    """How the pass ends without applying, if it can: a pending health check
    of the same input only looks at the objects again; nothing new (same
    revision, same input, same generation, no drift, no new ``requestedAt``)
    is up to date; a new revision that leaves the input unchanged (a commit
    elsewhere in a monorepo) only records the revision."""
    pending = a.pending_health
    if pending and a.same_input and not a.drift and a.spec.get("wait"):
        a.rendered_digest = history.digest_recorded(a.status, a.revision)
        return check_health(a, _epoch(pending), a.inventory, None)
    settled = (
        a.ready.get("status") == "True"
        and a.status.get("observedGeneration") == a.generation
        and a.status.get("lastAppliedDigest") == a.digest
        and not a.drift
        and not a.new_request
        and not a.target.server  # a remote target: each pass corrects its drift
    )
    if settled and a.status.get("lastAppliedRevision") == a.revision:
        return UpToDate()
    if settled:
        return RevisionOnly()
    # The whole pass (render, validate, apply, prune and health checks) is bounded by
    # spec.timeout; a drift correction during a health check keeps its deadline.
    a.deadline = _epoch(pending) if pending and a.same_input else time.time() + a.timeout
    return None


# -- render, plan, validate, apply, prune --------------------------------------------

def load_objects(repo: dict, sha: str, spec: dict, deadline: float | None = None) -> list[dict]:
    """Render ``spec.path`` of the shared checkout of ``sha`` (RenderError,
    TimeoutExceeded, GitError)."""
    meta = repo["metadata"]
    path = repository_dir(repo)
    with gitstore.checked_out(path, meta["namespace"], meta["name"], sha) as tree:
        return render(tree, spec.get("path") or "./", (repo.get("spec") or {}).get("ignore"), deadline)


def render_objects(a: Attempt) -> list[dict]:
    """The objects of the revision: rendered, decrypted (SOPS), substituted (postBuild)."""
    a.progress(f"rendering {a.path} at {a.revision}")
    try:
        objects = load_objects(a.repo, a.sha, a.spec, a.deadline)
        # Digested as rendered: never a hash of decrypted values in status.
        a.rendered_digest = history.digest_of(objects)
        if a.spec.get("decryption"):
            objects = sops.decrypt_objects(objects, sops.identities(a.namespace, a.spec, a.user, a.registry))
        return postbuild.substitute(objects, a.variables, bool(a.spec.get("postBuild")))
    except engine.TimeoutExceeded as exc:
        raise _timed_out(a, exc, "BuildFailed") from None
    except (RenderError, postbuild.SubstitutionError, sops.DecryptionError) as exc:
        raise Failed("BuildFailed", "; ".join(exc.messages[:20]), a.revision) from None
    except (gitstore.GitError, OSError) as exc:
        raise Failed("ArtifactFailed", f"cannot check out {a.revision}: {exc}", a.revision) from None


@dataclass
class Plan:
    """What the pass will apply and prune."""

    entries: list[engine.Entry]
    problems: list[engine.Problem]
    old_inventory: list[dict]
    new_inventory: list[dict]
    doomed: list[engine.Doomed]


def plan(a: Attempt, objects: list[dict]) -> Plan:
    """Entries to apply and objects to prune; nothing goes ahead unless the
    Sync's identity may apply and prune all of it."""
    entries, problems = a.target.plan(objects, a.namespace, a.name, a.spec.get("targetNamespace") or "",
                                      a.spec.get("driftIgnoreRules"))
    old_inventory = a.inventory
    new_inventory = engine.inventory_entries(entries)
    doomed = engine.doomed(old_inventory, {e["id"] for e in new_inventory}) if a.spec.get("prune", True) else []
    try:
        denied = a.target.authorize(entries, doomed)
    except errors.StatusError as exc:
        raise Failed(TARGET_FAILED, exc.status.get("message", str(exc)), a.revision) from None
    if denied:
        raise Failed("ReconciliationFailed", _problems(denied), a.revision)
    return Plan(entries, problems, old_inventory, new_inventory, doomed)


def validate(a: Attempt, p: Plan) -> None:
    """Every object validated by a server-side dry run (apply nothing if one
    fails), and a destructive prune held until allowed (``sync.pruneguard``)."""
    problems = list(p.problems)
    if a.status.get("lastAppliedDigest") != a.digest or a.status.get("observedGeneration") != a.generation:
        # Same input as the last successful apply needs no second dry-run
        # (drift and requestedAt runs re-apply it; apply itself still validates).
        a.progress(f"validating {len(p.entries)} objects")
        try:
            problems += a.target.validate(p.entries, a.namespace, a.name, deadline=a.deadline,
                                          force_recreate=bool(a.spec.get("force")))
        except engine.TimeoutExceeded as exc:
            raise _timed_out(a, exc) from None
    if problems:
        raise Failed("ValidationFailed", _problems(problems), a.revision)
    held = pruneguard.hold_message(p.doomed, len(p.old_inventory), len(p.new_inventory))
    if held and not pruneguard.allowed(a.meta, a.sha):
        sha = a.sha
        raise Failed(pruneguard.REASON,
                     f"revision {a.revision} would {held}; nothing applied. To apply it: kubectl annotate "
                     f"sync {a.name} -n {a.namespace} {pruneguard.ALLOW_ANNOTATION}={sha[:12]}",
                     a.revision, record=lambda st: st.__setitem__("pruneHeldRevision", sha))


def apply_objects(a: Attempt, p: Plan) -> engine.Outcome:
    a.progress(f"applying {len(p.entries)} objects")
    try:
        return a.target.apply(p.entries, force_recreate=bool(a.spec.get("force")), progress=a.progress,
                              deadline=a.deadline, reapply=a.status.get("lastAppliedDigest") == a.digest)
    except engine.TimeoutExceeded as exc:
        raise _timed_out(a, exc) from None
    except errors.StatusError as exc:
        raise Failed("ReconciliationFailed", f"apply failed: {exc.status.get('message')}", a.revision) from None


def prune(a: Attempt, p: Plan, outcome: engine.Outcome) -> None:
    """Delete what the previous inventory had and this one lacks (``spec.prune``)."""
    if p.doomed:
        try:
            a.target.prune(p.old_inventory, {e["id"] for e in p.new_inventory}, a.namespace, a.name, outcome,
                           deadline=a.deadline)
        except engine.TimeoutExceeded as exc:
            raise _timed_out(a, exc, "PruneFailed") from None
        except errors.StatusError as exc:
            raise Failed("PruneFailed", f"prune failed: {exc.status.get('message')}", a.revision) from None
    a.progress(f"applied {outcome.applied}, unchanged {outcome.unchanged}, pruned {outcome.pruned}")


# -- health (spec.wait) -------------------------------------------------------------

def check_health(a: Attempt, deadline: float, inventory: list[dict],
                 outcome: engine.Outcome | None) -> Applied | Waiting:
    """``spec.wait``: Applied once every object is healthy; Waiting while some
    are in progress (not a loop: the queue runs the check again); Failed when
    one failed or the deadline passed."""
    try:
        failed, waiting = a.target.unhealthy(inventory)
    except errors.StatusError as exc:
        raise Failed(TARGET_FAILED, exc.status.get("message", str(exc)), a.revision) from None
    if not failed and not waiting:
        return Applied(inventory, outcome)
    applied = Applied(inventory, outcome)
    if failed:
        raise Failed("HealthCheckFailed", f"health check failed: {listing(failed + waiting)}",
                     a.revision, applied=applied)
    if time.time() >= deadline:
        raise Failed("HealthCheckFailed",
                     f"health check failed after {a.timeout_text}: timeout waiting for: {listing(waiting)}",
                     a.revision, applied=applied)
    return Waiting(deadline, inventory, outcome, waiting)


# -- helpers -----------------------------------------------------------------------

def _timed_out(a: Attempt, exc: engine.TimeoutExceeded, reason: str = "ReconciliationFailed") -> Failed:
    return Failed(reason,
                  f"timeout of {a.timeout_text} exceeded while {exc.stage} revision {a.revision}: "
                  f"{exc.done} of {exc.total} {exc.unit} done", a.revision)


def _problems(problems: list[engine.Problem], limit: int = 20) -> str:
    more = f" (and {len(problems) - limit} more)" if len(problems) > limit else ""
    return "; ".join(str(p) for p in problems[:limit]) + more


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


def _epoch(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
