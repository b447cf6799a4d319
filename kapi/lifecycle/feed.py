"""The change feed: turn new rows of the change log into lifecycle work items.

One feed runs at a time (a session advisory lock, released by PostgreSQL if the
worker dies). It reads ``kapi_change`` after its cursor and up to
``kapi_rv_horizon()`` (so a version that commits late is never skipped), and in
ONE transaction asks for the work the batch implies and moves the cursor: a
crash either keeps both or neither. What a batch implies:

* a deleted object: check every dependent of it (one indexed statement);
* an object being deleted with ``orphan``/``foregroundDeletion``: handle it as an owner;
* an object with ownerReferences: check it, unless every owner is plainly there;
* a change to a dependent of an owner deleting in the foreground: re-check that owner;
* a namespace, or any change inside a terminating namespace, or the deletion of
  a ``default`` ServiceAccount: look at the namespace again;
* any change to a ClusterRole: aggregate every ClusterRole with an
  ``aggregationRule`` again (``aggregation``).

If the change log was compacted past the cursor, ``resync`` rebuilds the
intent from the objects themselves.
"""

from __future__ import annotations

import logging

import orjson
from django.db import connection, transaction

from kapi.lifecycle import aggregation, objects, wakeup, work
from kapi.registry.store import GC_FINALIZERS
from kapi.storage import default_storage

__all__ = ["BATCH", "resync", "run", "sweep_deleting"]

log = logging.getLogger(__name__)

BATCH = 1000
_LOCK_KEY = 0x6B617069_6763  # "kapi" "gc"


def run(max_batches: int = 20) -> bool:
    """Catch up (at most ``max_batches``). Returns True if it should run again."""
    with connection.cursor() as cur:
        cur.execute("SELECT pg_try_advisory_lock(%s)", [_LOCK_KEY])
        if not cur.fetchone()[0]:
            return False  # another feed runs; it re-checks ``wanted`` when it stops
    try:
        more = False
        for _ in range(max_batches):
            if _one_batch() < BATCH:
                break
        else:
            more = True
    finally:
        with connection.cursor() as cur:
            cur.execute("SELECT pg_advisory_unlock(%s)", [_LOCK_KEY])
    if not more:
        with connection.cursor() as cur:
            cur.execute("SELECT wanted FROM kapi_lifecycle_cursor WHERE id = 2")
            row = cur.fetchone()
            more = bool(row and row[0])
    return more


def _one_batch() -> int:
    with connection.cursor() as cur:
        cur.execute("UPDATE kapi_lifecycle_cursor SET wanted = false WHERE id = 2")
        cur.execute("SELECT revision FROM kapi_lifecycle_cursor WHERE id = 1")
        (position,) = cur.fetchone()
    horizon = default_storage().current_revision()
    with connection.cursor() as cur:
        cur.execute("SELECT revision FROM kapi_compaction WHERE id = 1")
        row = cur.fetchone()
        compacted = int(row[0]) if row else 0
        if position < compacted:
            log.warning("change log compacted past the lifecycle cursor; resyncing")
            with transaction.atomic():
                resync(full=True)
                _move(horizon)
            wakeup.wake_workers(2)
            return 0
        cur.execute(
            'SELECT resource_version, "group", resource, namespace, name, uid::text, type,'
            " data->'metadata' FROM kapi_change"
            " WHERE resource_version > %s AND resource_version <= %s"
            " ORDER BY resource_version LIMIT %s",
            [position, horizon, BATCH],
        )
        rows = cur.fetchall()
    plan = _Plan()
    for row in rows:
        plan.add(*row)
    end = rows[-1][0] if len(rows) == BATCH else horizon
    with transaction.atomic():
        asked = plan.ask()
        _move(end)
    if asked:
        wakeup.wake_workers(2 if asked > 50 else 1)
    return len(rows)


def _move(revision: int) -> None:
    with connection.cursor() as cur:
        cur.execute(
            "UPDATE kapi_lifecycle_cursor SET revision = GREATEST(revision, %s) WHERE id = 1",
            [revision],
        )


class _Plan:
    def __init__(self) -> None:
        self.deleted: set[str] = set()
        self.owners: dict[str, tuple] = {}
        self.dependents: dict[str, tuple] = {}  # uid -> (key, refs, deleted)
        self.namespaces_touched: set[str] = set()
        self.namespace_changes: dict[str, tuple] = {}
        self.sa_deleted: set[str] = set()
        self.cluster_roles_changed = False

    def add(self, rv, group, resource, namespace, name, uid, type_, meta) -> None:
        if isinstance(meta, (str, bytes)):
            meta = orjson.loads(meta)
        meta = meta or {}
        key = (group, resource, namespace, name)
        deleted = type_ == "DELETED"
        if deleted:
            self.deleted.add(uid)
            self.owners.pop(uid, None)
        elif "deletionTimestamp" in meta and set(meta.get("finalizers") or []) & set(
            GC_FINALIZERS
        ):
            self.owners[uid] = key
        refs = meta.get("ownerReferences")
        if isinstance(refs, list) and refs:
            self.dependents[uid] = (
                key,
                [r for r in refs if isinstance(r, dict)],
                deleted,
            )
        else:
            self.dependents.pop(uid, None)
        if group == aggregation.RBAC_GROUP and resource == "clusterroles":
            self.cluster_roles_changed = True
        if group == "" and resource == "namespaces":
            if not deleted:
                self.namespace_changes[uid] = key
        elif namespace:
            self.namespaces_touched.add(namespace)
            if (
                deleted
                and group == ""
                and resource == "serviceaccounts"
                and name == "default"
            ):
                self.sa_deleted.add(namespace)

    def ask(self) -> int:
        rows: list[tuple] = []
        for uid, (g, r, ns, n) in self.owners.items():
            rows.append(("owner", uid, g, r, ns, n, ""))
        for uid, (g, r, ns, n) in self.namespace_changes.items():
            rows.append(("namespace", uid, g, r, ns, n, ""))
        rows += self._dependents_to_check()
        rows += self._namespaces_to_check()
        if self.cluster_roles_changed:
            rows += aggregation.aggregating_roles()
        asked = work.request(rows)
        asked += work.request_dependents(sorted(self.deleted))
        return asked

    def _dependents_to_check(self) -> list[tuple]:
        if not self.dependents:
            return []
        owner_uids = objects.valid_uids(
            {r.get("uid") for _, refs, _ in self.dependents.values() for r in refs}
        )
        state: dict[str, tuple] = {}
        if owner_uids:
            with connection.cursor() as cur:
                cur.execute(
                    'SELECT uid::text, "group", resource, namespace, name,'
                    " (data->'metadata' ? 'deletionTimestamp')"
                    " AND coalesce(data->'metadata'->'finalizers' ? 'foregroundDeletion', false)"
                    " FROM kapi_object WHERE uid = ANY(%s::uuid[])",
                    [owner_uids],
                )
                for uid, g, r, ns, n, fg in cur.fetchall():
                    state[uid] = (g, r, ns, n, fg)
        rows = []
        for uid, ((g, r, ns, n), refs, deleted) in self.dependents.items():
            plain = True
            for ref in refs:
                owner = state.get(ref.get("uid"))
                if owner is not None and owner[4]:
                    rows.append(("owner", ref["uid"], *owner[:4], ""))
                    plain = False
                elif (
                    owner is None
                    or owner[3] != ref.get("name")
                    or owner[2] not in ("", ns)
                ):
                    plain = False
            if not plain and not deleted:
                rows.append(("attempt", uid, g, r, ns, n, ""))
        return rows

    def _namespaces_to_check(self) -> list[tuple]:
        names = sorted(self.namespaces_touched)
        if not names:
            return []
        with connection.cursor() as cur:
            cur.execute(
                "SELECT uid::text, name, data->'metadata' ? 'deletionTimestamp' FROM kapi_object"
                " WHERE \"group\" = '' AND resource = 'namespaces' AND namespace = ''"
                " AND name = ANY(%s::text[])",
                [names],
            )
            found = cur.fetchall()
        return [
            ("namespace", uid, "", "namespaces", "", name, "")
            for uid, name, deleting in found
            if deleting or name in self.sa_deleted
        ]


def sweep_deleting() -> int:
    """Safety net: ask (without bumping) for every object being deleted with a
    garbage-collector finalizer and every terminating namespace, and for every
    live namespace lacking its default ServiceAccount. Uses partial indexes."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT CASE WHEN \"group\" = '' AND resource = 'namespaces' AND namespace = ''"
            " THEN 'namespace' ELSE 'owner' END, uid::text, \"group\", resource, namespace, name"
            " FROM kapi_object WHERE data->'metadata' ? 'deletionTimestamp'"
            " AND ((\"group\" = '' AND resource = 'namespaces' AND namespace = '')"
            "      OR data->'metadata'->'finalizers' ?| array['orphan', 'foregroundDeletion'])"
        )
        rows = [(*r, "") for r in cur.fetchall()]
        cur.execute(
            "SELECT 'namespace', ns.uid::text, '', 'namespaces', '', ns.name FROM kapi_object ns"
            " WHERE ns.\"group\" = '' AND ns.resource = 'namespaces' AND ns.namespace = ''"
            " AND NOT (ns.data->'metadata' ? 'deletionTimestamp')"
            " AND NOT EXISTS (SELECT 1 FROM kapi_object sa WHERE sa.\"group\" = ''"
            " AND sa.resource = 'serviceaccounts' AND sa.namespace = ns.name AND sa.name = 'default')"
        )
        rows += [(*r, "") for r in cur.fetchall()]
    return work.request(rows, bump=False)


def resync(full: bool = False) -> int:
    """Rebuild the intent from the objects: ``sweep_deleting``, and with ``full``
    a check of every object that has owner references."""
    asked = sweep_deleting()
    if full:
        with connection.cursor() as cur:
            cur.execute(
                "SELECT 'attempt', uid::text, \"group\", resource, namespace, name, ''"
                " FROM kapi_object WHERE data->'metadata' ? 'ownerReferences'"
            )
            asked += work.request(cur.fetchall(), bump=False)
        asked += work.request(aggregation.aggregating_roles(), bump=False)
    return asked
