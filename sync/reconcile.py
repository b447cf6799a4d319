"""Reconciling a Sync: from the source's revision to applied objects and status.

The recipe, one run at a time per Sync (``sync.controllers``), one stage per
function of ``sync.stages``; whatever the pass ends with, ``sync.conclude``
alone writes the status:

1. deleting? prune the inventory (``prune: true``), then drop the finalizer
   (``sync.finalize``);
2. suspended? nothing (resuming requests a run, which takes the latest revision);
   a spec only a spec change can fix (path outside the repository)? Stalled
   (``preflight``);
3. source artifact and ``dependsOn`` ready? else a condition and a retry
   (``source``); where it applies: kapi's store, or the API server of
   ``spec.kubeConfig`` (``connect``, ``sync.target``); a rollback pin moves
   the pass to the pinned commit (``pin``);
4. the digest of the input (``inputs``); a ``spec.wait`` health check pending
   for this same input? only check the objects again; nothing new (same
   revision, same tree under ``spec.path``, same generation, no drift, no new
   ``requestedAt``)? write nothing; a new revision whose tree under the path
   is unchanged only records the revision (monorepos) (``shortcut``);
5. Reconciling=True (``conclude.mark_started``); render, plan, validate
   everything (apply nothing if anything fails), apply (re-applying the last
   applied input, only what drifted), prune what the previous inventory had
   and the new set lacks, all within ``spec.timeout``;
6. ``spec.wait``? wait for health without holding the worker (``check_health``);
7. status: inventory, counts, conditions, revisions, history; an Event when
   something changed (``conclude``); on a remote target, watches of what the
   Sync applied there (``sync.remotewatch``).
"""

from __future__ import annotations

from kapi import errors
from kapi.registry.store import Registry
from sync import controllers, remotewatch, stages
from sync.attempt import (
    Applied,
    Attempt,
    Failed,
    Progress,
    RevisionOnly,
    UpToDate,
    Waiting,
)
from sync.conclude import conclude, mark_started
from sync.finalize import finalize
from sync.kinds import sync_type

__all__ = ["reconcile_sync"]


def _noop(_: str) -> None:
    pass


def reconcile_sync(namespace: str, name: str, reason: str = "", drift: bool = False,
                   registry: Registry | None = None, progress: Progress = _noop) -> float | None:
    """One pass; returns seconds until the next periodic run (None: none)."""
    registry = registry or Registry()
    try:
        sync = registry.get(sync_type(), namespace, name)
    except errors.StatusError as exc:
        if exc.code == 404:
            controllers.forget(controllers.SYNC, namespace, name)
            remotewatch.release((namespace, name))
            return None
        raise
    if sync["metadata"].get("deletionTimestamp"):
        remotewatch.release((namespace, name))
        finalize(sync, registry, progress)
        return None
    if (sync.get("spec") or {}).get("suspend"):
        progress("suspended")
        return None
    attempt = Attempt(registry, sync, drift, progress)
    try:
        result = _run(attempt)
    except Failed as failure:
        result = failure
    _watch(attempt, result)
    return conclude(attempt, result)


def _watch(a: Attempt, result) -> None:
    """Drift on a remote target: watch what the Sync applied there
    (``sync.remotewatch``); a Sync applying to kapi itself watches nothing."""
    if a.target is None:
        return  # the pass ended before it knew its target: the watches stay as they were
    if not a.target.server:
        remotewatch.release((a.namespace, a.name))
        return
    inventory = getattr(result, "inventory", None)
    if inventory is None:
        applied = getattr(result, "applied", None)
        inventory = applied.inventory if applied is not None else a.inventory
    remotewatch.ensure(a.target, (a.namespace, a.name), inventory, remotewatch.fingerprint(a.registry, a.sync))


def _run(a: Attempt) -> Applied | Waiting | RevisionOnly | UpToDate:
    stages.preflight(a)
    stages.source(a)
    stages.connect(a)
    stages.pin(a)
    stages.inputs(a)
    early = stages.shortcut(a)
    if early is not None:
        return early
    mark_started(a)
    objects = stages.render_objects(a)
    plan = stages.plan(a, objects)
    stages.validate(a, plan)
    outcome = stages.apply_objects(a, plan)
    stages.prune(a, plan, outcome)
    if a.spec.get("wait"):
        return stages.check_health(a, a.deadline, plan.new_inventory, outcome)
    return Applied(plan.new_inventory, outcome)
