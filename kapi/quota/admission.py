"""Quota admission: refuse a write past a ResourceQuota, and charge the ones
that pass in the write's own transaction.

After kube's ``CheckRequest`` (``apiserver/pkg/admission/plugin/resourcequota``):
for each quota of the namespace whose ``status.hard`` names a resource the
object's evaluator counts and whose scopes the object falls in, a pod must set
what the quota limits ("failed quota: q: must specify cpu,memory"), the quota
must have a usage for it ("status unknown for quota"), and usage plus the
object's must stay within ``hard`` ("exceeded quota: q, requested: ..., used:
..., limited: ..."), all 403 Forbidden. kube then writes the new
``status.used`` with the quota's resourceVersion and retries on a conflict;
here ``Charge.commit`` does the same inside the transaction that writes the
object (a savepoint per attempt), so two creates racing for the last slot
cannot both pass: the second one's conditional update waits for the first's
commit, finds the version moved, and checks again against the new usage.

An update is charged only where usage can change (services, PVCs), by the
difference. A dry run is checked but charges nothing. As in kube, a charged
create does not make the controller count again; a quota admission could not
use yet (no ``status.hard``, or one behind ``spec.hard``) does.
"""

from __future__ import annotations

from kapi import errors
from kapi.controllers import feed
from kapi.quota import resources
from kapi.quota.evaluators import evaluator_for
from kapi.quota.watch import FEED
from kapi.storage import Key, ListQuery, ResourceVersionConflict, default_storage

__all__ = ["Charge", "charges_updates", "check"]

_QUOTAS = ("", "resourcequotas")
_ATTEMPTS = 16


def charges_updates(rt) -> bool:
    """Whether an update of ``rt`` can change what it uses (cheap)."""
    return rt.namespaced and evaluator_for(rt.group, rt.stored_resource).handles_update


def _quotas(namespace: str) -> list[dict]:
    return default_storage().list(ListQuery(group="", resource="resourcequotas", namespace=namespace)).items


class Charge:
    """What a write costs the quotas of its namespace."""

    def __init__(self, rt, new: dict, old: dict | None) -> None:
        self.rt, self.new, self.old = rt, new, old
        self.evaluator = evaluator_for(rt.group, rt.stored_resource)
        self.namespace = new["metadata"].get("namespace", "")
        #: A quota of the namespace that admission cannot rely on yet.
        self.unsettled = False

    def _forbidden(self, message: str) -> errors.StatusError:
        return errors.forbidden(self.rt.group, self.rt.plural, self.new["metadata"].get("name", ""), message)

    def evaluate(self, quotas: list[dict]) -> dict[str, tuple[dict, resources.ResourceList]]:
        """The quotas to charge (name -> (quota, new used)); raises 403."""
        ev, obj = self.evaluator, self.new
        interesting = []
        for quota in quotas:
            status = quota.get("status") or {}
            if status.get("hard") != (quota.get("spec") or {}).get("hard"):
                # The controller has yet to settle it (new, or spec changed):
                # have it count again after this write commits.
                self.unsettled = True
            hard = resources.parsed(status.get("hard"))
            matched = ev.matching_resources(hard)
            if not matched or not ev.matches_scopes(quota, obj):
                continue
            name = quota["metadata"]["name"]
            missing = ev.constraints(matched, obj)
            if missing:
                raise self._forbidden(f"failed quota: {name}: {missing}")
            used = resources.parsed(status.get("used"))
            if any(n not in used for n in matched):
                raise self._forbidden(f"status unknown for quota: {name}, resources: {','.join(sorted(matched))}")
            interesting.append((quota, hard, used))
        delta = ev.usage(obj)
        if self.old is not None and (self.old.get("metadata") or {}).get("resourceVersion"):
            delta = resources.subtract_non_negative(delta, ev.usage(self.old))
        delta = resources.remove_zeros(delta)
        if not delta:
            return {}
        out = {}
        for quota, hard, used in interesting:
            requested = resources.mask(delta, hard)
            new_used = resources.add(used, requested)
            over = resources.exceeded(resources.mask(new_used, requested), hard)
            if over:
                raise self._forbidden(
                    f"exceeded quota: {quota['metadata']['name']}, "
                    f"requested: {resources.pretty(resources.mask(requested, over))}, "
                    f"used: {resources.pretty(resources.mask(used, over))}, "
                    f"limited: {resources.pretty(resources.mask(hard, over))}"
                )
            if requested:
                out[quota["metadata"]["name"]] = (quota, new_used)
        return out

    def commit(self) -> None:
        """Charge the quotas, in the caller's transaction; raises 403 when a
        racing write took what was left."""
        storage = default_storage()
        for _ in range(_ATTEMPTS):
            try:
                with storage.atomic():
                    for quota, new_used in self.evaluate(_quotas(self.namespace)).values():
                        meta = quota["metadata"]
                        quota.setdefault("status", {})["used"] = resources.formatted(new_used)
                        storage.update(
                            Key(*_QUOTAS, meta["namespace"], meta["name"]), quota, int(meta["resourceVersion"])
                        )
            except ResourceVersionConflict:
                continue
            if self.unsettled:
                feed.wake(FEED)
            return
        raise errors.conflict("", "resourcequotas", "", "too many concurrent writes to the quota; try again")


def check(rt, new: dict, old: dict | None, dry_run: bool) -> Charge | None:
    """Refuse ``new`` (403) if it would pass a quota; the ``Charge`` to commit
    with the write, or None when no quota of the namespace is concerned."""
    if not rt.namespaced or (old is not None and not charges_updates(rt)):
        return None
    charge = Charge(rt, new, old)
    quotas = _quotas(charge.namespace)
    if not quotas:
        return None
    charge.evaluate(quotas)
    return None if dry_run else charge
