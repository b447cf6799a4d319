"""The lifecycle's watch: which changes of the change log map to which keys of
the lifecycle's controllers (``kapi.lifecycle.controllers``).

The runtime's ``lifecycle`` feed (``kapi.controllers.feed``) hands each batch
of changes to a ``_Plan`` and requests what it asks for in one transaction with
the move of its cursor. What a batch implies:

* a deleted object: check every dependent of it (one indexed statement);
* an object being deleted with ``orphan``/``foregroundDeletion``: handle it as an owner;
* an object with ownerReferences: check it, unless every owner is plainly there;
* a change to a dependent of an owner deleting in the foreground: re-check that owner;
* a namespace, or any change inside a terminating namespace, or the deletion of
  a ``default`` ServiceAccount: look at the namespace again;
* any change to a ClusterRole: aggregate every ClusterRole with an
  ``aggregationRule`` again (``aggregation``).

If the change log was compacted past the cursor, ``resync(full=True)``
rebuilds the intent from the objects themselves; ``resync(full=False)`` is the
runtime's slow safety sweep.
"""

from __future__ import annotations

from kapi.controllers import feed, workqueue
from kapi.lifecycle import aggregation, objects
from kapi.registry.store import FOREGROUND, GC_FINALIZERS
from kapi.storage import Key, default_storage
from kapi.storage.interface import Change

__all__ = ["FEED", "WATCH", "resync", "sweep_deleting"]

#: The runtime feed the lifecycle reads.
FEED = "lifecycle"

#: Where Namespaces are stored, and the ServiceAccount each one gets.
NAMESPACES = ("", "namespaces")
DEFAULT_SERVICE_ACCOUNT = Key("", "serviceaccounts", "", "default")


class _Plan(feed.Plan):
    def __init__(self) -> None:
        #: The request behind each changed object (uid), when known.
        self.requests: dict[str, str] = {}
        self.deleted: set[str] = set()
        self.owners: dict[str, tuple] = {}
        self.dependents: dict[str, tuple] = {}  # uid -> (key, refs, deleted)
        self.namespaces_touched: set[str] = set()
        self.namespace_changes: dict[str, tuple] = {}
        self.sa_deleted: set[str] = set()
        self.cluster_roles_changed = False

    def add(self, change: Change) -> None:
        group, resource, namespace, name = (
            change.key.group, change.key.resource, change.key.namespace, change.key.name,
        )
        uid, type_, meta, request_id = change.uid, change.type, change.metadata, change.request_id
        if request_id:
            self.requests[uid] = request_id
            if namespace:
                self.requests.setdefault(f"ns:{namespace}", request_id)
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
        asked = workqueue.request([(*row, self._request_of(row)) for row in rows])
        deleted = sorted(self.deleted)
        cause = next((self.requests[u] for u in deleted if u in self.requests), "")
        asked += objects.request_dependents(deleted, request_id=cause)
        return asked

    def _request_of(self, row: tuple) -> str:
        """The request behind an item: the object's own write, else (a
        namespace touched by a change inside it) a write in that namespace."""
        kind, uid, _g, _r, _ns, name = row[:6]
        found = self.requests.get(uid, "")
        if not found and kind == "namespace":
            found = self.requests.get(f"ns:{name}", "")
        return found

    def _dependents_to_check(self) -> list[tuple]:
        if not self.dependents:
            return []
        owner_uids = objects.valid_uids(
            {r.get("uid") for _, refs, _ in self.dependents.values() for r in refs}
        )
        state: dict[str, tuple] = {}
        for o in default_storage().summaries_by_uid(owner_uids):
            k = o.key
            fg = o.deleting and FOREGROUND in o.finalizers
            state[o.uid] = (k.group, k.resource, k.namespace, k.name, fg)
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
        found = default_storage().summaries_by_name(NAMESPACES, "", names)
        return [
            ("namespace", o.uid, *NAMESPACES, "", o.key.name, "")
            for o in found
            if o.deleting or o.key.name in self.sa_deleted
        ]


def sweep_deleting() -> int:
    """Safety net: ask (without bumping) for every object being deleted with a
    garbage-collector finalizer and every terminating namespace, and for every
    live namespace lacking its default ServiceAccount. Uses partial indexes."""
    storage = default_storage()
    rows = [
        (
            "namespace" if (o.key.group, o.key.resource) == NAMESPACES else "owner",
            o.uid, o.key.group, o.key.resource, o.key.namespace, o.key.name, "", "",
        )
        for o in storage.being_deleted(GC_FINALIZERS, [NAMESPACES])
    ]
    rows += [
        ("namespace", o.uid, *NAMESPACES, "", o.key.name, "", "")
        for o in storage.namespaces_without(NAMESPACES, DEFAULT_SERVICE_ACCOUNT)
    ]
    return workqueue.request(rows, bump=False)


def resync(full: bool = False) -> int:
    """Rebuild the intent from the objects: ``sweep_deleting``, and with ``full``
    a check of every object that has owner references."""
    asked = sweep_deleting()
    if full:
        rows = [
            ("attempt", o.uid, o.key.group, o.key.resource, o.key.namespace, o.key.name, "", "")
            for o in default_storage().with_owners()
        ]
        asked += workqueue.request(rows, bump=False)
        asked += workqueue.request(aggregation.aggregating_roles(), bump=False)
    return asked


WATCH = feed.Watch(FEED, _Plan, resync, reads=("deletionTimestamp", "finalizers", "ownerReferences"))
