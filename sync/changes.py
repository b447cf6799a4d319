"""Reading the change log (``kapi_change``) for the sync: triggers and drift.

Workers have no watch cache, so the sync reads the change log with a
persisted cursor (``sync_change_cursor``), up to ``kapi_rv_horizon()`` so that
no write still in flight below the cursor is skipped. One pass turns changes
into requests:

* a Sync created, its ``spec`` changed (generation), a new ``requestedAt``,
  an allow for its held prune (``sync.pruneguard``), a new or removed pin
  (``sync.history``), resumed from suspend, or
  being deleted → reconcile it;
* a GitRepository created or changed → fetch it;
* an object labelled ``sync.kapi.dev/name`` deleted, or changed by a manager
  other than ``kapi-sync`` (another manager's managedFields entry is as new as ours) →
  drift: reconcile the owning Sync in full. All changes of one pass collapse
  into one request per Sync (the debounce).

When the cursor is missing or older than the compacted history, every Sync
and GitRepository is requested once instead (a resync).
"""

from __future__ import annotations

import logging

import orjson
from django.db import connection

from kapi.observability import origin
from sync import history, pruneguard, queue
from sync.api import GROUP, LABEL_NAME, LABEL_NAMESPACE, REQUESTED_AT

__all__ = ["drifted", "owning_sync", "run_reason", "scan"]

BATCH = 5000
FIELD_MANAGER = "kapi-sync"
log = logging.getLogger(__name__)
_SCAN_LOCK = (0x5359, 0)


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
        or (kind == queue.SYNC and requested_at and requested_at != handled)
        or (kind == queue.SYNC and held and pruneguard.allowed(meta, held))
        or (kind == queue.SYNC and _pin_changed(meta, pinned))
    ):
        return "requestedAt" if requested_at and requested_at != handled else "changed"
    return None


def owning_sync(meta: dict) -> tuple[str, str] | None:
    """(namespace, name) of the Sync an object is labelled with, if any."""
    labels = meta.get("labels") or {}
    owner = (labels.get(LABEL_NAMESPACE, ""), labels.get(LABEL_NAME, ""))
    return owner if owner[0] and owner[1] else None


def drifted(meta: dict, deleted: bool) -> bool:
    """Whether a write of an object a Sync applied undoes the Sync's state."""
    return deleted or _drifted(meta)


def _resync() -> None:
    with connection.cursor() as cur:
        cur.execute(
            "SELECT resource, namespace, name FROM kapi_object WHERE \"group\" = %s "
            "AND resource IN ('syncs', 'gitrepositories')",
            [GROUP],
        )
        for resource, namespace, name in cur.fetchall():
            kind = queue.SYNC if resource == "syncs" else queue.REPOSITORY
            queue.request(kind, namespace, name, "resync")


def scan() -> tuple[int, bool]:
    """One pass over new changes, single-flight. Returns how many were read,
    and whether to scan again: a full batch, or a write asked for a scan
    (``sync.scanwake``) since this one cleared the flag. A scan that finds
    another running leaves it to that one, which looks at the flag after
    releasing its lock."""
    with connection.cursor() as cur:
        cur.execute("SELECT pg_try_advisory_lock(%s, %s)", list(_SCAN_LOCK))
        if not cur.fetchone()[0]:
            return 0, False
    try:
        with connection.cursor() as cur:
            cur.execute("UPDATE sync_change_cursor SET wanted = false WHERE id = 2 AND wanted")
        read = _scan()
    finally:
        with connection.cursor() as cur:
            cur.execute("SELECT pg_advisory_unlock(%s, %s)", list(_SCAN_LOCK))
    with connection.cursor() as cur:
        cur.execute("SELECT wanted FROM sync_change_cursor WHERE id = 2")
        row = cur.fetchone()
    return read, read >= BATCH or bool(row and row[0])


def _scan() -> int:
    with connection.cursor() as cur:
        cur.execute("SELECT kapi_rv_horizon(2000)")
        horizon = cur.fetchone()[0]
        cur.execute("SELECT revision FROM sync_change_cursor WHERE id = 1")
        row = cur.fetchone()
        cur.execute("SELECT revision FROM kapi_compaction WHERE id = 1")
        compacted = cur.fetchone()[0]
    if row is None or row[0] < compacted:
        _resync()
        with connection.cursor() as cur:
            cur.execute(
                "INSERT INTO sync_change_cursor (id, revision) VALUES (1, %s) "
                "ON CONFLICT (id) DO UPDATE SET revision = EXCLUDED.revision",
                [horizon],
            )
        return 0
    cursor = row[0]
    with connection.cursor() as cur:
        cur.execute(
            f"""SELECT c.resource_version, c."group", c.resource, c.namespace, c.name, c.type,
                      c.data->'metadata', c.data->'status'->'observedGeneration',
                      c.data->'status'->'lastHandledReconcileAt',
                      c.data->'status'->>'pruneHeldRevision',
                      c.data->'status'->'pin'->>'revision', {origin.COLUMN}
               FROM kapi_change c{origin.JOIN}
               WHERE c.resource_version > %s AND c.resource_version <= %s
                 AND (c."group" = %s OR c.data->'metadata'->'labels' ? %s)
               ORDER BY c.resource_version LIMIT %s""",
            [cursor, horizon, GROUP, LABEL_NAME, BATCH],
        )
        rows = cur.fetchall()
    requests: dict[tuple[str, str, str], tuple[str, bool, str]] = {}
    for _rv, group, resource, namespace, name, type_, meta, observed, handled, held, pinned, request_id in rows:
        meta = orjson.loads(meta) if isinstance(meta, (str, bytes)) else (meta or {})
        if group == GROUP and resource in ("syncs", "gitrepositories"):
            kind = queue.SYNC if resource == "syncs" else queue.REPOSITORY
            observed = orjson.loads(observed) if isinstance(observed, (str, bytes)) else observed
            handled = orjson.loads(handled) if isinstance(handled, (str, bytes)) else handled
            reason = run_reason(kind, type_, meta, observed, handled, held, pinned)
            if reason:
                requests.setdefault((kind, namespace, name), (reason, False, request_id))
            continue
        owner = owning_sync(meta)
        if owner and (type_ == "DELETED" or (type_ == "MODIFIED" and _drifted(meta))):
            requests[(queue.SYNC, owner[0], owner[1])] = ("drift", True, request_id)
    for (kind, namespace, name), (reason, drift, request_id) in requests.items():
        queue.request(kind, namespace, name, reason, drift=drift, request_id=request_id)
    new_cursor = rows[-1][0] if len(rows) == BATCH else horizon
    with connection.cursor() as cur:
        cur.execute("UPDATE sync_change_cursor SET revision = %s WHERE id = 1", [new_cursor])
    return len(rows)
