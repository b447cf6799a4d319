"""Waking the workers after a write that matters, once the write has committed.

Registered as a registry write observer (``kapi.apps``). Deletions, objects being
deleted, objects with ``ownerReferences``, namespaces and ClusterRoles (aggregation)
are what the lifecycle
acts on; any other write does not touch the queue. A writer wakes the
feed through its cursor's ``wanted`` flag (``kapi.wakeflag``): a burst of
writes sends one task.
"""

from __future__ import annotations

from kapi.observability import origin
from kapi.wakeflag import WakeFlag, send_on_commit

__all__ = [
    "TIMER", "arm_timer", "before_write", "on_write", "wake_feed", "wake_feed_now", "wake_workers",
]


#: The name of the lifecycle's timer (``kapi.duetimer``): it runs the sweep
#: when postponed work comes due.
TIMER = "lifecycle"


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
        wake_feed()


def _feed_task():
    from kapi.lifecycle.tasks import process_changes

    return process_changes


_FEED = WakeFlag("kapi_lifecycle_cursor", _feed_task, "the lifecycle feed")


def wake_feed() -> None:
    _FEED.wake()


def wake_workers(count: int = 1) -> None:
    from kapi.lifecycle.tasks import work

    for _ in range(count):
        send_on_commit(work)


def wake_feed_now() -> None:
    """Enqueue the feed without looking at the flag (it asked to run again)."""
    send_on_commit(_feed_task())


def arm_timer(seconds: float) -> None:
    """Have the lifecycle's sweep run in ``seconds`` (unless it runs sooner)."""
    from kapi import duetimer
    from kapi.lifecycle.tasks import sweep

    duetimer.arm(TIMER, sweep, seconds)
