"""Validate-on-push: the hosted repository's pre-receive hook.

Before git updates the tracked branch or tag (or brings a pinned commit:
``sync.pushref``), every Sync that uses the repository renders the pushed
revision and server-side-dry-runs it as it would apply it
(``sync.apply.validate``: custom resources whose CRD, and objects whose
Namespace, arrive in the same push are validated against what the push
brings). Any problem rejects the push; each is printed on its own line, which
git shows the pusher as ``remote:`` lines (object, field path, message).
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
from sync.api import repository_type
from sync.identity import identity
from sync.plan import Plan
from sync.render import RenderError, render
from sync.source import repository_dir, syncs_of

__all__ = ["check_push"]


def check_push(namespace: str, name: str, updates: Iterable[str], out: TextIO,
               git_env: dict[str, str] | None = None) -> bool:
    """True to accept; ``updates`` are pre-receive's "old new ref" lines;
    ``git_env`` lets git read the pushed objects (``gitstore.quarantine_env``)
    when this runs outside the hook's own environment."""
    registry = Registry()
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
    new, branch = pushed.sha, pushed.what
    if new is None:
        return True
    syncs = syncs_of(namespace, name, registry)
    ok = True
    for sync in syncs:
        smeta, sspec = sync["metadata"], sync.get("spec") or {}
        label = f"Sync {smeta['namespace']}/{smeta['name']}"
        user = identity(smeta["namespace"], sspec)
        try:
            with gitstore.checked_out(path, namespace, f"{name}.push", new, git_env) as tree:
                if not any(tree.iterdir()):
                    out.write(f"kapi: {label}: revision {new[:12]} has no files (empty tree)\n")
                objects = render(tree, sspec.get("path") or "./", spec.get("ignore"))
            if sspec.get("decryption"):
                keys = sops.identities(smeta["namespace"], sspec, user, registry)
                objects = sops.decrypt_objects(objects, keys)
            if sspec.get("postBuild"):
                values = postbuild.variables(smeta["namespace"], sspec, user, registry)
                objects = postbuild.substitute(objects, values, True)
        except gitstore.GitError as exc:
            out.write(f"kapi: cannot read revision {new[:12]} of {branch}: {exc}\n")
            ok = False
            break
        except (RenderError, postbuild.SubstitutionError, sops.DecryptionError) as exc:
            for message in exc.messages:
                out.write(f"kapi: {label}: {message}\n")
            ok = False
            continue
        entries, problems = engine.plan(objects, smeta["namespace"], smeta["name"],
                                        sspec.get("targetNamespace") or "", sspec.get("driftIgnoreRules"))
        # As the Sync will apply it: with its identity's rights, and only
        # objects it may apply are dry-run (a pusher learns nothing through
        # these lines about objects the Sync may not touch).
        denied = engine.authorize(entries, user, registry)
        refused = {p.subject for p in denied}
        allowed = [e for e in entries if e.subject not in refused]
        # Decrypted values never reach the pusher: with SOPS, the plan names fields only.
        plan = Plan(hide_values=bool(sspec.get("decryption")))
        problems += denied + engine.validate(allowed, smeta["namespace"], smeta["name"],
                                             access.registry_for(user),
                                             force_recreate=bool(sspec.get("force")), plan=plan)
        for problem in problems:
            out.write(f"kapi: {label}: {problem}\n")
        ok = ok and not problems
        if not problems and not _check_prune(sync, entries, new, user, out, plan):
            ok = False
        if not problems:
            for line in plan.lines():
                out.write(f"kapi: {label}: {line}\n")
    if not ok:
        out.write(f"kapi: push to {branch} rejected: the revision does not validate "
                  f"(set spec.validateOnPush: false on GitRepository {namespace}/{name} to skip)\n")
    return ok


def _check_prune(sync: dict, entries: list[engine.Entry], sha: str, user, out: TextIO, plan: Plan) -> bool:
    """False when the Sync's identity may not delete what this revision prunes
    (each 403 on a ``remote:`` line). A destructive prune is no refusal: the
    lines say the Sync will hold it (``sync.pruneguard``) until allowed."""
    smeta, sspec = sync["metadata"], sync.get("spec") or {}
    if not sspec.get("prune", True):
        return True
    old = ((sync.get("status") or {}).get("inventory") or {}).get("entries") or []
    new_inventory = engine.inventory_entries(entries)
    doomed = engine.doomed(old, {e["id"] for e in new_inventory})
    label = f"Sync {smeta['namespace']}/{smeta['name']}"
    plan.prunes.extend(target.subject for target in doomed)
    denied = engine.authorize_prune(doomed, user)
    for problem in denied:
        out.write(f"kapi: {label}: prune: {problem}\n")
    held = pruneguard.hold_message(doomed, len(old), len(new_inventory))
    if held and not pruneguard.allowed(smeta, sha):
        out.write(f"kapi: {label}: this revision would {held}; the Sync will hold it until "
                  f"`kubectl annotate sync {smeta['name']} -n {smeta['namespace']} "
                  f"{pruneguard.ALLOW_ANNOTATION}={sha[:12]}`\n")
    return not denied
