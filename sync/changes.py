"""The sync's watch: which changes of the change log ask for which runs.

The sync reads the change log as the runtime's ``sync`` feed
(``kapi.controllers.feed``: a durable cursor, read through storage, only the
changes of ``sync.kapi.dev`` objects and of objects labelled with an owning
Sync). One batch turns changes into requests (``sync.controllers``):

* a Sync created, its ``spec`` changed (generation), a new ``requestedAt``,
  an allow for its held prune (``sync.pruneguard``), a new or removed pin
  (``sync.history``), resumed from suspend, or
  being deleted → reconcile it;
* a GitRepository created or changed → fetch it;
* an object labelled ``sync.kapi.dev/name`` that ``kapi-sync`` applied
  deleted, or changed by a manager other than ``kapi-sync`` (another manager's managedFields entry is as new as ours) →
  drift: reconcile the owning Sync in full. All changes of one pass collapse
  into one request per Sync (the debounce).

When the cursor is missing or older than the compacted history, every Sync
and GitRepository is requested once instead (a resync). Writes that may
matter wake the feed (``sync.scanwake``).
"""

from __future__ import annotations

from kapi.controllers import feed
from kapi.storage import default_storage
from kapi.storage.interface import Change, ChangeFilter
from sync import controllers, history, pruneguard
from sync.kinds import GROUP, LABEL_NAME, LABEL_NAMESPACE, REQUESTED_AT

__all__ = ["FEED", "WATCHES", "drifted", "owning_sync", "run_reason"]

#: The runtime feed the sync reads.
FEED = "sync"
FIELD_MANAGER = "kapi-sync"


def _drifted(meta: dict) -> bool:
    # A status write (a controller, or a test standing in for one) is not
    # drift: kapi-sync owns no status field.
    entries = [e for e in meta.get("managedFields") or [] if e.get("subresource") != "status"]
    if not meta.get("managedFields"):
        return True
    ours = max((e.get("time") or "" for e in entries if e.get("manager") == FIELD_MANAGER), default="")
    # Times have one-second resolution: a tie counts as drift (at worst one
    # reconcile that writes nothing).
    return any(
        e.get("manager") != FIELD_MANAGER and (e.get("time") or "") >= ours for e in entries
    )


def _pin_changed(meta: dict, pinned: str | None) -> bool:
    """The ``sync.kapi.dev/pin`` annotation set, changed or removed since the
    Sync last recorded its pin (``status.pin``; ``sync.history``)."""
    pin = history.pin_of(meta)
    return bool(pin) != bool(pinned) or bool(pin and not (pinned or "").startswith(pin))


def run_reason(kind: str, type_: str, meta: dict, observed, handled, held: str | None,
               pinned: str | None) -> str | None:
    """Why a change of a Sync or GitRepository (``meta``, and from its status
    ``observedGeneration``, ``lastHandledReconcileAt``, ``pruneHeldRevision``,
    ``pin.revision``) asks for a run, or None."""
    if type_ == "DELETED":
        return None
    requested_at = (meta.get("annotations") or {}).get(REQUESTED_AT)
    if (
        type_ == "ADDED"
        or meta.get("deletionTimestamp")
        or observed != meta.get("generation")
        or (kind == controllers.SYNC and requested_at and requested_at != handled)
        or (kind == controllers.SYNC and held and pruneguard.allowed(meta, held))
        or (kind == controllers.SYNC and _pin_changed(meta, pinned))
    ):
        return "requestedAt" if requested_at and requested_at != handled else "changed"
    return None


def _applied_by_sync(meta: dict) -> bool:
    """Whether ``kapi-sync`` wrote the object (or nobody's ownership is left
    to tell): controllers copy a Service's labels onto the Endpoints and
    EndpointSlices they make (as kube's do), which the Sync never applied and
    whose every update is no drift."""
    entries = meta.get("managedFields")
    return not entries or any(e.get("manager") == FIELD_MANAGER for e in entries)


def owning_sync(meta: dict) -> tuple[str, str] | None:
    """(namespace, name) of the Sync an object is labelled with, if any."""
    labels = meta.get("labels") or {}
    owner = (labels.get(LABEL_NAMESPACE, ""), labels.get(LABEL_NAME, ""))
    return owner if owner[0] and owner[1] else None


def drifted(meta: dict, deleted: bool) -> bool:
    """Whether a write of an object a Sync applied undoes the Sync's state."""
    return deleted or _drifted(meta)


def _resync(full: bool) -> int:
    """Request every Sync and GitRepository once (the history went past the
    cursor); nothing for the slow safety sweep (``full`` False)."""
    if not full:
        return 0
    keys = default_storage().keys(GROUP, ["syncs", "gitrepositories"])
    return controllers.request_all([
        (controllers.SYNC if key.resource == "syncs" else controllers.REPOSITORY,
         key.namespace, key.name, "resync", False, None)
        for key in keys
    ])


class _Plan(feed.Plan):
    """All changes of one batch collapse into one request per Sync (the debounce)."""

    def __init__(self) -> None:
        self.requests: dict[tuple[str, str, str], tuple[str, bool, str]] = {}

    def add(self, change: Change) -> None:
        key, meta, status = change.key, change.metadata, change.status
        if key.group == GROUP and key.resource in ("syncs", "gitrepositories"):
            kind = controllers.SYNC if key.resource == "syncs" else controllers.REPOSITORY
            reason = run_reason(
                kind, change.type, meta, status.get("observedGeneration"),
                status.get("lastHandledReconcileAt"), status.get("pruneHeldRevision"),
                (status.get("pin") or {}).get("revision"),
            )
            if reason:
                self.requests.setdefault(
                    (kind, key.namespace, key.name), (reason, False, change.request_id)
                )
            return
        owner = owning_sync(meta)
        if owner and _applied_by_sync(meta) and (
            change.type == "DELETED" or (change.type == "MODIFIED" and _drifted(meta))
        ):
            self.requests[(controllers.SYNC, owner[0], owner[1])] = (
                "drift", True, change.request_id,
            )

    def ask(self) -> int:
        return controllers.request_all([
            (kind, namespace, name, reason, drift, request_id)
            for (kind, namespace, name), (reason, drift, request_id) in self.requests.items()
        ])


WATCH = feed.Watch(
    FEED, _Plan, _resync, select=ChangeFilter(groups=(GROUP,), labels=(LABEL_NAME,))
)
WATCHES = [WATCH]
