"""The ClusterRole aggregation controller (kube's ``clusterroleaggregation``).

Any change to a ClusterRole (create, update of labels or rules, delete) asks for
an ``aggregate`` work item per ClusterRole that has an ``aggregationRule``
(``feed``); each item writes the union its selectors match into that role's
``.rules`` (``kapi.auth.aggregation``), and writes nothing when they already
hold it, so chains converge and the loop ends. ``sync_all`` does the same
synchronously at startup, so an existing data directory is right at once.
"""

from __future__ import annotations

import logging

from kapi.auth import aggregation
from kapi.auth.rbac import RBAC_GROUP
from kapi.errors import StatusError
from kapi.registry.catalog import catalog
from kapi.registry.options import UpdateOptions
from kapi.registry.store import Registry
from kapi.storage import Preconditions, default_storage

__all__ = ["aggregating_roles", "sync", "sync_all"]

log = logging.getLogger(__name__)


def _type():
    return catalog().lookup(RBAC_GROUP, "v1", "clusterroles")


def aggregating_roles() -> list[tuple]:
    """Work rows ``("aggregate", uid, group, resource, "", name, "")`` for every
    stored ClusterRole with an aggregationRule."""
    return [
        ("aggregate", o.uid, o.key.group, o.key.resource, "", o.key.name, "")
        for o in default_storage().summaries_with((RBAC_GROUP, "clusterroles"), "aggregationRule")
    ]


def _all(registry: Registry) -> dict[str, dict]:
    items = registry.list(_type(), None)["items"]
    return {r["metadata"]["name"]: r for r in items}


def sync(name: str, uid: str, registry: Registry | None = None) -> bool:
    """Write the aggregated rules into the ClusterRole ``name`` (if it is still
    the one with ``uid`` and still aggregates). True when it wrote."""
    registry = registry or Registry()
    roles = _all(registry)
    role = roles.get(name)
    if role is None or role["metadata"].get("uid") != uid:
        return False
    if not aggregation.aggregates(role):
        return False
    rules = aggregation.aggregated_rules(name, roles)
    if rules == (role.get("rules") or []):
        return False

    def put_rules(current: dict) -> dict:
        current["rules"] = rules
        return current

    try:
        registry.update_with(
            _type(),
            "",
            name,
            put_rules,
            UpdateOptions(field_manager=aggregation.FIELD_MANAGER),
            preconditions=Preconditions(uid=uid),
        )
    except StatusError as exc:
        if exc.code in (404, 409):
            return False  # gone or replaced: its own change asks again
        raise
    log.info("aggregated %d rules into ClusterRole %s", len(rules), name)
    return True


def sync_all(registry: Registry | None = None, max_passes: int = 10) -> None:
    """Every aggregating ClusterRole, until nothing changes (startup)."""
    registry = registry or Registry()
    for _ in range(max_passes):
        wrote = False
        for _kind, uid, _g, _r, _ns, name, _p in aggregating_roles():
            wrote = sync(name, uid, registry) or wrote
        if not wrote:
            return
