"""The garbage collector's two verbs, after kube-controller-manager's
``pkg/controller/garbagecollector``.

``attempt(uid)`` looks at one object's owners (kube's ``attemptToDeleteItem``):
each owner reference is *solid* (the owner exists with that uid), *dangling* (no
such owner, or another uid), *waiting* (the owner is being deleted in the
foreground) or *unresolvable* (a cluster-scoped dependent naming a namespaced
owner). An owner of a kind not served (yet) makes the item retry later, as
kube's REST mapping errors do. With a solid owner the dependent stays and
loses its dangling and waiting references; with none (and nothing unresolvable)
it is deleted, in the foreground if an owner waits on it and it has dependents of
its own. If one of those dependents waits on its own dependents too (maybe a
cycle: a ← b ← c ← a, each blocking its owner), its references are first made
non-blocking, as kube's ``attemptToDeleteItem`` does, so the owners waiting on
it are not held for ever.

``owner(uid)`` handles an owner's dependents: an ``orphan`` finalizer strips the
owner's references from every dependent, then goes; a ``foregroundDeletion``
finalizer has every dependent checked and goes once no dependent with
``blockOwnerDeletion`` remains; a deleted owner has all its dependents checked.

Every write goes through the registry with a uid precondition, so a recreated
object of the same name is never touched, and repeating any step is harmless.
"""

from __future__ import annotations

import logging

from kapi.controllers import wakeup, workqueue
from kapi.errors import StatusError
from kapi.lifecycle import FIELD_MANAGER, events, objects
from kapi.registry.options import UpdateOptions
from kapi.registry.store import FOREGROUND, ORPHAN, Registry
from kapi.storage import Key, KeyNotFound, Preconditions, default_storage

__all__ = ["attempt", "owner"]

log = logging.getLogger(__name__)

SOLID, DANGLING, WAITING, UNRESOLVABLE = "solid", "dangling", "waiting", "unresolvable"

#: Dependents handled per pass of an orphaning owner (long work goes in chunks).
CHUNK = 500


def _gone(exc: StatusError) -> bool:
    """404 (gone) and 409 (the uid precondition: it is another object now)."""
    return exc.code in (404, 409)


def _ref_text(ref: dict, namespace: str) -> str:
    return (
        f"[{ref.get('apiVersion', '')}/{ref.get('kind', '')}, namespace: {namespace}, "
        f"name: {ref.get('name', '')}, uid: {ref.get('uid', '')}]"
    )


#: Owner references known to dangle: a uid never comes back, so this holds for
#: good (bounded; per worker process).
_DANGLING: dict[tuple, bool] = {}
_DANGLING_MAX = 10000


def _owner_state(dep_rt, dep: dict, ref: dict) -> str:
    dep_ns = dep["metadata"].get("namespace") or ""
    known = (
        str(ref.get("uid")),
        dep_ns,
        str(ref.get("apiVersion")),
        str(ref.get("kind")),
        str(ref.get("name")),
    )
    if known in _DANGLING:
        return DANGLING
    state = _resolve_owner(dep_rt, dep, ref)
    if state == DANGLING:
        if len(_DANGLING) >= _DANGLING_MAX:
            _DANGLING.clear()
        _DANGLING[known] = True
    return state


def _resolve_owner(dep_rt, dep: dict, ref: dict) -> str:
    owner_rt = objects.kind_type(ref.get("apiVersion"), ref.get("kind"))
    if owner_rt is None:
        raise objects.TypeNotServed(
            f"owner kind {ref.get('kind')} in {ref.get('apiVersion')} is not served"
        )
    dep_ns = dep["metadata"].get("namespace") or ""
    if owner_rt.namespaced and not dep_rt.namespaced:
        events.record(
            dep_rt,
            dep,
            "Warning",
            "OwnerRefInvalidNamespace",
            f'ownerRef {_ref_text(ref, "")} does not exist in namespace ""',
            events.GC_COMPONENT,
        )
        return UNRESOLVABLE
    ns = dep_ns if owner_rt.namespaced else ""
    try:
        found = default_storage().get(
            Key(
                owner_rt.stored_group, owner_rt.stored_resource, ns, ref.get("name", "")
            )
        )
    except KeyNotFound:
        found = None
    if found is None or found["metadata"].get("uid") != ref.get("uid"):
        if owner_rt.namespaced and _exists_elsewhere(ref.get("uid"), dep_ns):
            events.record(
                dep_rt,
                dep,
                "Warning",
                "OwnerRefInvalidNamespace",
                f'ownerRef {_ref_text(ref, dep_ns)} does not exist in namespace "{dep_ns}"',
                events.GC_COMPONENT,
            )
        return DANGLING
    meta = found["metadata"]
    if "deletionTimestamp" in meta and FOREGROUND in (meta.get("finalizers") or []):
        return WAITING
    return SOLID


def _exists_elsewhere(uid, namespace: str) -> bool:
    uids = objects.valid_uids([uid])
    if not uids:
        return False
    found = default_storage().summaries_by_uid(uids)
    return any(o.key.namespace != namespace for o in found)


def attempt(uid: str, registry: Registry | None = None) -> None:
    """Collect the object ``uid`` if none of its owners holds it any more."""
    registry = registry or Registry()
    found = objects.get_by_uid(uid, registry)
    if found is None:
        return
    rt, obj = found
    meta = obj["metadata"]
    if "deletionTimestamp" in meta:
        return  # already going; its own finalizers (if any) are handled by owner()
    refs = [r for r in meta.get("ownerReferences") or [] if isinstance(r, dict)]
    if not refs:
        return
    states = [(ref, _owner_state(rt, obj, ref)) for ref in refs]
    solid = [r for r, s in states if s == SOLID]
    dangling = [r for r, s in states if s == DANGLING]
    waiting = [r for r, s in states if s == WAITING]
    if solid:
        if dangling or waiting:
            _remove_refs(registry, rt, obj, {r.get("uid") for r in dangling + waiting})
        if waiting:
            # The waiting owners no longer wait on this one: look at them again now
            # (the feed cannot tell, the reference is gone from the object).
            owners = objects.valid_uids(r.get("uid") for r in waiting)
            workqueue.request([("owner", u, "", "", "", "", "") for u in owners])
            wakeup.wake_workers()
        return
    if any(s == UNRESOLVABLE for _, s in states):
        return  # kube keeps it: an owner it cannot look up might exist
    finalizers = meta.get("finalizers") or []
    own_dependents = objects.dependents([uid]) if waiting else []
    if own_dependents:
        if any(d.deleting and FOREGROUND in d.finalizers for d in own_dependents):
            # A dependent of this one waits on its own dependents too: maybe a
            # cycle (kube's check, false positives included). Its references
            # stop blocking, so the owners waiting on it need not wait for it.
            _unblock_refs(registry, rt, obj)
        policy = "Foreground"
    elif ORPHAN in finalizers:
        policy = "Orphan"
    elif FOREGROUND in finalizers:
        policy = "Foreground"
    else:
        policy = "Background"
    _delete(registry, rt, obj, policy)


def owner(uid: str, registry: Registry | None = None) -> bool:
    """Handle the dependents of ``uid``. Returns True when more is left to do now."""
    registry = registry or Registry()
    found = objects.get_by_uid(uid, registry)
    if found is None:
        if objects.request_dependents([uid]):
            wakeup.wake_workers()
        return False
    rt, obj = found
    meta = obj["metadata"]
    if "deletionTimestamp" not in meta:
        return False
    finalizers = meta.get("finalizers") or []
    if ORPHAN in finalizers:
        deps = objects.dependents([uid], limit=CHUNK)
        for dep in deps:
            key = dep.key
            dep_rt = objects.type_for_stored(key.group, key.resource)
            if dep_rt is None:
                raise objects.TypeNotServed(f"{key.resource}.{key.group} is not served")
            _remove_refs_by_key(
                registry, dep_rt, key.namespace, key.name, dep.uid, {uid}
            )
        if len(deps) == CHUNK:
            return True
        _remove_finalizer(registry, rt, obj, ORPHAN)
        return False
    if FOREGROUND in finalizers:
        deps = objects.dependents([uid])
        pending = [d for d in deps if not d.deleting]
        if pending:
            workqueue.request(
                [
                    ("attempt", d.uid, d.key.group, d.key.resource, d.key.namespace, d.key.name, "")
                    for d in pending
                ]
            )
            wakeup.wake_workers(2 if len(pending) > 50 else 1)
        blocking = [
            d for d in deps if any(r.get("blockOwnerDeletion") for r in objects.refs_to(d, uid))
        ]
        if not blocking:
            _remove_finalizer(registry, rt, obj, FOREGROUND)
    return False


def _delete(registry: Registry, rt, obj: dict, policy: str) -> None:
    try:
        objects.delete_same(registry, rt, obj, policy)
    except StatusError as exc:
        events.record(
            rt,
            obj,
            "Warning",
            "FailedDelete",
            f"the garbage collector could not delete {rt.plural} {obj['metadata']['name']}: {exc}",
            events.GC_COMPONENT,
            registry,
        )
        raise


def _remove_refs(registry: Registry, rt, obj: dict, uids: set) -> None:
    meta = obj["metadata"]
    _remove_refs_by_key(
        registry, rt, meta.get("namespace", ""), meta["name"], meta["uid"], uids
    )


def _remove_refs_by_key(
    registry: Registry, rt, namespace: str, name: str, uid: str, uids: set
) -> None:
    def strip(current: dict) -> dict:
        refs = current["metadata"].get("ownerReferences") or []
        kept = [r for r in refs if not (isinstance(r, dict) and r.get("uid") in uids)]
        if kept:
            current["metadata"]["ownerReferences"] = kept
        else:
            current["metadata"].pop("ownerReferences", None)
        return current

    _update(registry, rt, namespace, name, uid, strip)


def _unblock_refs(registry: Registry, rt, obj: dict) -> None:
    """Every ``blockOwnerDeletion: true`` of the object's references made
    false (kube's unblockOwnerReferences)."""

    def unblock(current: dict) -> dict:
        for ref in current["metadata"].get("ownerReferences") or []:
            if isinstance(ref, dict) and ref.get("blockOwnerDeletion") is True:
                ref["blockOwnerDeletion"] = False
        return current

    _update_object(registry, rt, obj, unblock)


def _remove_finalizer(registry: Registry, rt, obj: dict, finalizer: str) -> None:
    def strip(current: dict) -> dict:
        kept = [
            f for f in current["metadata"].get("finalizers") or [] if f != finalizer
        ]
        if kept:
            current["metadata"]["finalizers"] = kept
        else:
            current["metadata"].pop("finalizers", None)
        return current

    _update_object(registry, rt, obj, strip)


def _update_object(registry: Registry, rt, obj: dict, mutate) -> None:
    meta = obj["metadata"]
    _update(registry, rt, meta.get("namespace", ""), meta["name"], meta["uid"], mutate)


def _update(registry: Registry, rt, namespace: str, name: str, uid: str, mutate) -> None:
    """``mutate`` the object as it is now, if it is still the one of ``uid``."""
    try:
        registry.update_with(
            rt,
            namespace,
            name,
            mutate,
            UpdateOptions(field_manager=FIELD_MANAGER),
            preconditions=Preconditions(uid=uid),
        )
    except StatusError as exc:
        if not _gone(exc):
            raise
