"""A deleted Sync: prune its inventory (``spec.prune``) as its identity, then
drop the finalizer."""

from __future__ import annotations

from kapi import errors
from kapi.auth import access
from kapi.registry.store import Registry
from sync import controllers
from sync.attempt import Progress
from sync.conclude import listing
from sync.identity import identity
from sync.kinds import FINALIZER, sync_type
from sync.status import event
from sync.target import KubeconfigError, target_for

__all__ = ["finalize"]


def finalize(sync: dict, registry: Registry, progress: Progress) -> None:
    meta, spec = sync["metadata"], sync.get("spec") or {}
    namespace, name = meta["namespace"], meta["name"]
    if FINALIZER not in (meta.get("finalizers") or []):
        return
    inventory = ((sync.get("status") or {}).get("inventory") or {}).get("entries") or []
    if spec.get("prune", True) and inventory:
        progress(f"deleting {len(inventory)} inventory objects")
        # As the Sync's identity. What it may not delete stays (a Warning event
        # names it): a binding that the namespace's deletion removed first must
        # not hold the Sync forever, nor hand its prune to the controller.
        # A target that cannot be used (kubeconfig gone, server unreachable)
        # must not hold the Sync either: its objects stay, a Warning says so.
        user = identity(namespace, spec)
        try:
            target = target_for(namespace, spec, user, registry, access.registry_for(user))
            outcome = target.prune(inventory, set(), namespace, name, skip_forbidden=True)
        except (KubeconfigError, errors.StatusError) as exc:
            why = exc.status.get("message", str(exc)) if isinstance(exc, errors.StatusError) else str(exc)
            event(sync, "Warning", "PruneFailed", f"{len(inventory)} objects left in place: {why}", registry)
            outcome = None
        if outcome is not None and outcome.forbidden:
            event(sync, "Warning", "PruneFailed",
                  f"{len(outcome.forbidden)} objects left in place: {listing(outcome.forbidden, 5)}", registry)

    def drop(obj: dict) -> dict:
        obj["metadata"]["finalizers"] = [f for f in obj["metadata"].get("finalizers") or [] if f != FINALIZER]
        return obj

    try:
        registry.update_with(sync_type(), namespace, name, drop)
    except errors.StatusError as exc:
        if exc.code != 404:
            raise
    controllers.forget(controllers.SYNC, namespace, name)
    progress("deleted")
