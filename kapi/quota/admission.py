"""Quota admission, after kube-apiserver's ResourceQuota admission plugin: a
create or update whose cost (``usage``; for an update only what grows) would
take any matching quota of its namespace past ``spec.hard`` is refused with
kube's 403 text, and an admitted one is charged to the quota's ``status.used``
at once, written with the quota's resourceVersion (a conflict reads the quota
again and decides again), so two writers never both take the last slot. The
registry writes the charge and the object in one transaction (``writes``): a
recount by the quota controller sees both or neither, so it can never put
back a count that misses an object whose charge it read, and a write that
fails takes its charge with it.

A namespace with no quota costs one indexed read, and then nothing for as
long as this process's watch cache sees no quota appear there
(``kapi.quota.lister``, as kube's lister and live lookup). A write in a namespace that
has one wakes the controllers' feed, so ``status.used`` follows every change.
"""

from __future__ import annotations

import logging
from fractions import Fraction

from kapi import errors
from kapi.controllers import feed
from kapi.lifecycle.watch import FEED
from kapi.quantity import canonical
from kapi.quota import usage as quota_usage
from kapi.quota.lister import empty_namespaces
from kapi.storage import Key, KeyNotFound, ResourceVersionConflict, default_storage
from kapi.storage.interface import ListQuery

__all__ = ["PLUGIN", "admit"]

log = logging.getLogger(__name__)

#: Tries at charging a quota that other writers keep changing.
_ATTEMPTS = 8
_QUOTAS = ("", "resourcequotas")


def _quotas(namespace: str) -> list[dict]:
    empty = empty_namespaces()
    if empty.known_empty(namespace):
        return []
    storage = default_storage()
    # A plain count first: a consistent list waits for every write in flight,
    # which no write of a namespace without quotas may do.
    token = empty.token(namespace)
    if not storage.count_in_namespace(namespace, [_QUOTAS]):
        empty.remember_empty(namespace, token)
        return []
    return list(storage.list(ListQuery(group=_QUOTAS[0], resource=_QUOTAS[1], namespace=namespace)).items)


def admit(rt, namespace: str, new: dict, old: dict | None, dry_run: bool) -> None:
    """Refuse (403) or charge the write of ``new`` (``old``: the object it
    replaces, None on create)."""
    if not rt.namespaced or not namespace:
        return
    group, resource = rt.stored_group, rt.stored_resource
    quotas = _quotas(namespace)
    if quotas or (group, resource) == _QUOTAS:
        feed.wake(FEED)
    if not quotas:
        return
    cost = quota_usage.usage(group, resource, new)
    if old is not None:
        before = quota_usage.usage(group, resource, old)
        cost = {k: v - before.get(k, Fraction(0)) for k, v in cost.items()}
    cost = {k: v for k, v in cost.items() if v > 0}
    if not cost:
        return
    name = (new.get("metadata") or {}).get("name") or ""
    for quota in sorted(quotas, key=lambda q: q["metadata"]["name"]):
        _charge(rt, namespace, name, quota, group, resource, new, cost, dry_run)


def writes(rt, namespace: str, updating: bool) -> bool:
    """Whether admitting a write may charge a quota: not in a namespace this
    process knows to hold none, nor for an update of a kind whose cost only a
    create adds."""
    if not rt.namespaced or not namespace or empty_namespaces().known_empty(namespace):
        return False
    return not updating or (rt.stored_group, rt.stored_resource) in quota_usage.GROWS_ON_UPDATE


class _QuotaAdmission:
    """The registry's admission plugin (``kapi.registry.store.AdmissionPlugin``)."""

    __call__ = staticmethod(admit)
    writes = staticmethod(writes)


PLUGIN = _QuotaAdmission()


def _charge(rt, namespace, name, quota, group, resource, new, cost, dry_run) -> None:
    storage = default_storage()
    key = Key(*_QUOTAS, namespace, quota["metadata"]["name"])
    for _ in range(_ATTEMPTS):
        hard = quota_usage.parse_list((quota.get("spec") or {}).get("hard"))
        asked = {
            k: v for k, v in cost.items() if k in hard and quota_usage.tracks(quota, k)
        }
        if not quota_usage.matches_scopes(quota, group, resource, new):
            return
        if (group, resource) == ("", "pods") and "pods" in cost:
            unset = quota_usage.missing(new, [k for k in hard if quota_usage.tracks(quota, k)])
            if unset:
                raise errors.forbidden(
                    rt.group, rt.plural, name,
                    f"failed quota: {quota['metadata']['name']}: must specify {','.join(unset)}",
                )
        if not asked:
            return
        status = quota.get("status") or {}
        known_hard = quota_usage.parse_list(status.get("hard"))
        used = quota_usage.parse_list(status.get("used"))
        unknown = sorted(k for k in asked if k not in used or known_hard.get(k) != hard[k])
        if unknown:
            raise errors.forbidden(
                rt.group, rt.plural, name,
                f"status unknown for quota: {quota['metadata']['name']}, resources: {','.join(unknown)}",
            )
        after = {k: used[k] + v for k, v in asked.items()}
        exceeded = sorted(k for k, v in after.items() if v > hard[k])
        if exceeded:
            raise errors.forbidden(
                rt.group, rt.plural, name,
                f"exceeded quota: {quota['metadata']['name']}, "
                f"requested: {_pretty(asked, exceeded)}, used: {_pretty(used, exceeded)}, "
                f"limited: {_pretty(hard, exceeded)}",
            )
        if dry_run:
            return
        charged = dict(quota)
        charged["status"] = {**status, "used": {**(status.get("used") or {}),
                                                 **quota_usage.format_list(after)}}
        try:
            storage.update(key, charged, int(quota["metadata"]["resourceVersion"]))
            return
        except ResourceVersionConflict:
            pass
        except KeyNotFound:
            return
        try:
            quota = storage.get(key)
        except KeyNotFound:
            return
    raise errors.conflict(
        "", "resourcequotas", quota["metadata"]["name"],
        "too many writers charging this quota at once; please try again",
    )


def _pretty(values: dict[str, Fraction], names: list[str]) -> str:
    return ",".join(f"{n}={canonical(values.get(n, Fraction(0)))}" for n in names)
