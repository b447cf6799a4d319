"""Controller references: who controls an object, adoption and release.

After kube's ``pkg/controller/controller_ref_manager.go`` (``ClaimObject``):
an object whose controller reference names the controller is kept while the
selector still matches it and released (its reference removed) when it no
longer does, unless the controller is being deleted; an orphan (no
controller reference) that the selector matches is adopted (a controller
reference added), unless it or the controller is being deleted. Objects
controlled by another owner are never touched.
"""

from __future__ import annotations

from kapi.registry.resource import ResourceType
from kapi.registry.store import Registry
from kapi.selectors.labels import LabelSelector
from kapi.workloads import api

__all__ = ["claim", "controller_of", "controller_ref"]

Object = api.Object


def controller_of(meta: dict) -> dict | None:
    """The ownerReference with ``controller: true``, if any (``metav1.GetControllerOf``)."""
    for ref in meta.get("ownerReferences") or ():
        if isinstance(ref, dict) and ref.get("controller") is True:
            return ref
    return None


def controller_ref(owner: Object) -> dict:
    """``metav1.NewControllerRef``: a controlling, owner-blocking reference."""
    return {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def claim(
    registry: Registry,
    owner: Object,
    selector: LabelSelector,
    rt: ResourceType,
    candidates: list[Object],
) -> list[Object]:
    """The candidates ``owner`` controls once adoption and release are done
    (kube's ``ClaimPods``/``ClaimReplicaSets``); ``candidates`` are those its
    selector matches and those naming it (``api.owned``)."""
    uid = owner["metadata"]["uid"]
    owner_deleting = "deletionTimestamp" in owner["metadata"]
    claimed: list[Object] = []
    seen: set[str] = set()
    for obj in candidates:
        meta = obj["metadata"]
        if meta["uid"] in seen:
            continue
        seen.add(meta["uid"])
        matches = selector.matches(meta.get("labels") or {})
        ref = controller_of(meta)
        if ref is not None:
            if ref.get("uid") != uid:
                continue
            if matches:
                claimed.append(obj)
            elif not owner_deleting:
                _release(registry, rt, obj, uid)
            continue
        if owner_deleting or not matches or "deletionTimestamp" in meta:
            continue
        adopted = _adopt(registry, rt, obj, owner)
        if adopted is not None:
            claimed.append(adopted)
    return claimed


def _adopt(registry: Registry, rt: ResourceType, obj: Object, owner: Object) -> Object | None:
    ref = controller_ref(owner)

    def add(current: Object) -> Object:
        meta = current["metadata"]
        if controller_of(meta) is not None:
            return current  # someone else was first
        refs = [r for r in meta.get("ownerReferences") or () if r.get("uid") != ref["uid"]]
        meta["ownerReferences"] = [*refs, ref]
        return current

    adopted = api.update(registry, rt, obj, add, exact=False)
    if adopted is None:
        return None
    found = controller_of(adopted["metadata"])
    return adopted if found is not None and found.get("uid") == ref["uid"] else None


def _release(registry: Registry, rt: ResourceType, obj: Object, uid: str) -> None:
    def remove(current: Object) -> Object:
        meta = current["metadata"]
        kept = [r for r in meta.get("ownerReferences") or () if r.get("uid") != uid]
        if kept:
            meta["ownerReferences"] = kept
        else:
            meta.pop("ownerReferences", None)
        return current

    api.update(registry, rt, obj, remove, exact=False)
