"""Validate-on-push: the hosted repository's pre-receive hook.

Before git updates the tracked branch or tag (or brings a pinned commit:
``sync.pushref``), every Sync that uses the repository renders the pushed
revision and server-side-dry-runs it as it would apply it
(``sync.apply.validate``: custom resources whose CRD, and objects whose
Namespace, arrive in the same push are validated against what the push
brings). Any problem rejects the push; each is printed on its own line, which
git shows the pusher as ``remote:`` lines (object, field path, message),
followed by the plan (``sync.plan``). A push of a branch that no Sync tracks
is a preview: each Sync's problems and plan for it are printed as if it
tracked that branch, nothing is applied or written, and the push is accepted.
``spec.validateOnPush: false`` on the GitRepository turns this off.

The hook (``sync.prereceive_hook``) runs inside ``git receive-pack`` and asks
the API server that serves the push to run ``check_push`` (``sync.http``); the
pushed objects are still in git's quarantine directory, which the server reads
through ``gitstore.quarantine_env``. ``manage.py sync pre-receive`` runs it in
the hook's own environment for pushes that bypass the server.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

from kapi import errors
from kapi.auth import access
from kapi.registry.store import Registry
from sync import apply as engine
from sync import gitstore, postbuild, pruneguard, pushref, sops
from sync.identity import identity
from sync.kinds import repository_type
from sync.plan import Plan
from sync.render import RenderError, render
from sync.source import repository_dir, syncs_of
from sync.target import KubeconfigError, target_for

__all__ = ["check_push"]


def check_push(namespace: str, name: str, updates: Iterable[str], out: TextIO,
               git_env: dict[str, str] | None = None) -> bool:
    """True to accept; ``updates`` are pre-receive's "old new ref" lines;
    ``git_env`` lets git read the pushed objects (``gitstore.quarantine_env``)
    when this runs outside the hook's own environment."""
    registry = Registry()
    updates = list(updates)  # read twice: the tracked ref, then previews
    try:
        repo = registry.get(repository_type(), namespace, name)
    except errors.StatusError as exc:
        if exc.code == 404:
            return True  # gone meanwhile: nothing uses the repository
        raise
    spec = repo.get("spec") or {}
    if spec.get("validateOnPush") is False:
        return True
    path = repository_dir(repo)
    pushed = pushref.target(repo, updates, path, git_env)
    for note in pushed.notes:
        out.write(f"{note}\n")
    if pushed.refused:
        out.write(f"{pushed.refused}\n")
        return False
    syncs = syncs_of(namespace, name, registry)
    ok = True
    for branch, sha in pushref.previews(repo, updates):
        # A branch no Sync tracks: what each Sync would do with it, nothing applied.
        out.write(f"kapi: preview of branch {branch} ({sha[:12]}); nothing is applied:\n")
        for sync in syncs:
            _evaluate(sync, repo, path, sha, git_env, registry, out, name, preview=True)
    new, branch = pushed.sha, pushed.what
    if new is None:
        return True
    for sync in syncs:
        verdict = _evaluate(sync, repo, path, new, git_env, registry, out, name)
        if verdict is None:
            return _rejected(out, branch, namespace, name)
        ok = ok and verdict
    if not ok:
        return _rejected(out, branch, namespace, name)
    return True


def _rejected(out: TextIO, branch: str, namespace: str, name: str) -> bool:
    out.write(f"kapi: push to {branch} rejected: the revision does not validate "
              f"(set spec.validateOnPush: false on GitRepository {namespace}/{name} to skip)\n")
    return False


def _evaluate(sync: dict, repo: dict, path, sha: str, git_env: dict[str, str] | None, registry: Registry,
              out: TextIO, name: str, preview: bool = False) -> bool | None:
    """Render, authorize, dry-run and plan ``sha`` as ``sync`` would apply it,
    writing every problem and the plan to ``out``. True when it would apply;
    None when the revision cannot be read at all."""
    spec = repo.get("spec") or {}
    smeta, sspec = sync["metadata"], sync.get("spec") or {}
    label = f"Sync {smeta['namespace']}/{smeta['name']}"
    if preview:
        label = f"preview: {label}"
    user = identity(smeta["namespace"], sspec)
    try:
        with gitstore.checked_out(path, smeta["namespace"], f"{name}.push", sha, git_env) as tree:
            if not any(tree.iterdir()):
                out.write(f"kapi: {label}: revision {sha[:12]} has no files (empty tree)\n")
            objects = render(tree, sspec.get("path") or "./", spec.get("ignore"))
        if sspec.get("decryption"):
            keys = sops.identities(smeta["namespace"], sspec, user, registry)
            objects = sops.decrypt_objects(objects, keys)
        if sspec.get("postBuild"):
            values = postbuild.variables(smeta["namespace"], sspec, user, registry)
            objects = postbuild.substitute(objects, values, True)
    except gitstore.GitError as exc:
        out.write(f"kapi: cannot read revision {sha[:12]}: {exc}\n")
        return None
    except (RenderError, postbuild.SubstitutionError, sops.DecryptionError) as exc:
        for message in exc.messages:
            out.write(f"kapi: {label}: {message}\n")
        return False
    # Where the Sync applies (sync.target): kapi itself, or the API server of
    # its kubeconfig, whose RBAC and admission answer the dry run.
    try:
        target = target_for(smeta["namespace"], sspec, user, registry, access.registry_for(user))
        entries, problems = target.plan(objects, smeta["namespace"], smeta["name"],
                                        sspec.get("targetNamespace") or "", sspec.get("driftIgnoreRules"))
        # As the Sync will apply it: with its identity's rights, and only
        # objects it may apply are dry-run (a pusher learns nothing through
        # these lines about objects the Sync may not touch).
        denied = target.authorize(entries, [])
        refused = {p.subject for p in denied}
        allowed = [e for e in entries if e.subject not in refused]
        # Decrypted values never reach the pusher: with SOPS, the plan names fields only.
        plan = Plan(hide_values=bool(sspec.get("decryption")))
        problems += denied + target.validate(allowed, smeta["namespace"], smeta["name"],
                                             force_recreate=bool(sspec.get("force")), plan=plan)
        for problem in problems:
            out.write(f"kapi: {label}: {problem}\n")
        if problems:
            return False
        ok = _check_prune(sync, entries, sha, target, out, plan, label)
    except KubeconfigError as exc:
        out.write(f"kapi: {label}: target: {exc}\n")
        return False
    except errors.StatusError as exc:
        out.write(f"kapi: {label}: target: {exc.status.get('message', exc)}\n")
        return False
    for line in plan.lines():
        out.write(f"kapi: {label}: {line}\n")
    return ok


def _check_prune(sync: dict, entries: list[engine.Entry], sha: str, target, out: TextIO, plan: Plan,
                 label: str) -> bool:
    """False when the Sync's identity may not delete what this revision prunes
    on its ``target`` (each 403 on a ``remote:`` line). A destructive prune is no refusal: the
    lines say the Sync will hold it (``sync.pruneguard``) until allowed."""
    smeta, sspec = sync["metadata"], sync.get("spec") or {}
    if not sspec.get("prune", True):
        return True
    old = ((sync.get("status") or {}).get("inventory") or {}).get("entries") or []
    new_inventory = engine.inventory_entries(entries)
    doomed = engine.doomed(old, {e["id"] for e in new_inventory})
    plan.prunes.extend(target.subject for target in doomed)
    denied = target.authorize([], doomed)
    for problem in denied:
        out.write(f"kapi: {label}: prune: {problem}\n")
    held = pruneguard.hold_message(doomed, len(old), len(new_inventory))
    if held and not pruneguard.allowed(smeta, sha):
        out.write(f"kapi: {label}: this revision would {held}; the Sync will hold it until "
                  f"`kubectl annotate sync {smeta['name']} -n {smeta['namespace']} "
                  f"{pruneguard.ALLOW_ANNOTATION}={sha[:12]}`\n")
    return not denied
