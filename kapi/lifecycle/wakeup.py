"""Waking the lifecycle's feed after a write that matters, once it has committed.

Registered as a registry write observer (``kapi.apps``). Deletions, objects
being deleted (a CRD's cleanup included), objects with ``ownerReferences``,
namespaces and ClusterRoles (aggregation) are what the lifecycle acts on; any
other write does not touch the queue. A burst of writes sends one feed run
(``kapi.controllers.feed.wake``).
"""

from __future__ import annotations

from kapi.controllers import feed
from kapi.lifecycle.watch import FEED
from kapi.observability import origin

__all__ = ["before_write", "on_write"]


def _matters(rt, obj: dict, deleted: bool) -> bool:
    meta = obj.get("metadata") or {}
    return bool(
        deleted
        or "deletionTimestamp" in meta
        or meta.get("ownerReferences")
        or (rt.stored_group == "" and rt.stored_resource == "namespaces")
        or (
            rt.stored_group == "rbac.authorization.k8s.io"
            and rt.stored_resource == "clusterroles"
        )
    )


def before_write(rt, obj: dict, deleted: bool) -> None:
    """The work the feed derives from this write will carry this request's id:
    recorded before the write, so a feed that reads the change finds it."""
    if _matters(rt, obj, deleted):
        origin.record(obj)


def on_write(rt, obj: dict, deleted: bool) -> None:
    if _matters(rt, obj, deleted):
        feed.wake(FEED)
