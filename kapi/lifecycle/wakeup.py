"""Waking the workers after a write that matters, once the write has committed.

Registered as a registry write observer (``kapi.apps``). Deletions, objects being
deleted, objects with ``ownerReferences``, namespaces and ClusterRoles (aggregation)
are what the lifecycle
acts on; any other write does not touch the queue. A writer flips the cursor's
``wanted`` flag (row 2 of the cursor table, so that writers never wait on the
feed's transaction, which locks row 1) and enqueues the feed only when it flipped it, so a burst of
writes sends one task, not one per write; the feed clears the flag before each
read, so a write that lands after a read always gets a fresh run.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError, connection, transaction

from kapi.observability import origin

__all__ = [
    "TIMER", "arm_timer", "before_write", "on_write", "wake_feed", "wake_feed_now", "wake_workers",
]

log = logging.getLogger(__name__)

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


def wake_feed() -> None:
    if connection.in_atomic_block:
        # Inside a transaction (a group of a namespace's deletes, a serialized
        # write), flip the flag once, after the commit: flipped inside, its row
        # lock would be held to the end of the transaction, and every other
        # writer that matters, and the feed, would wait for it (they all update
        # that row). A flag flipped after the commit is as good: the feed then
        # runs after the write is visible.
        if not any(entry[1] is _flip for entry in connection.run_on_commit):
            transaction.on_commit(_flip)
        return
    _flip()


def _flip() -> None:
    try:
        with connection.cursor() as cur:
            cur.execute(
                "UPDATE kapi_lifecycle_cursor SET wanted = true WHERE id = 2 AND NOT wanted"
            )
            flipped = cur.rowcount == 1
    except DatabaseError:  # e.g. before the lifecycle migration: the sweep catches up
        log.warning("could not flag the lifecycle feed", exc_info=True)
        return
    if flipped:
        from kapi.lifecycle.tasks import process_changes

        _on_commit(process_changes)


def wake_workers(count: int = 1) -> None:
    from kapi.lifecycle.tasks import work

    for _ in range(count):
        _on_commit(work)


def _on_commit(task) -> None:
    def send() -> None:
        try:
            task.delay()
        except Exception:  # the broker is down: beat's sweep will run it
            log.warning("could not enqueue %s", task.name, exc_info=True)

    transaction.on_commit(send)


def wake_feed_now() -> None:
    """Enqueue the feed without looking at the flag (it asked to run again)."""
    from kapi.lifecycle.tasks import process_changes

    _on_commit(process_changes)


def arm_timer(seconds: float) -> None:
    """Have the lifecycle's sweep run in ``seconds`` (unless it runs sooner)."""
    from kapi import duetimer
    from kapi.lifecycle.tasks import sweep

    duetimer.arm(TIMER, sweep, seconds)
