"""Running claimed work items: one batch per task, the rest re-enqueued.

A batch is claimed in one statement, handled item by item, and finished in one
statement. A batch that runs past a third of the claim's lifetime hands its
unstarted items back instead of risking their claims expiring under it. A
failing item is postponed with backoff (its intent stays in the table).

Consecutive ``delete`` items (a namespace's content) commit together, up to
``GROUP`` items or ``GROUP_SECONDS``, each in its own savepoint: one commit,
hence one WAL flush, per group instead of two per object (issue #20: a purge
of 10,000 objects spent its time waiting on fsync, and each purge on a busy
disk took minutes). The group stays short because every consistent read waits
for a transaction that took a resourceVersion (``kapi_rv_horizon()``).
"""

from __future__ import annotations

import logging
import time
from contextlib import nullcontext

from django.db import (
    DatabaseError,
    InterfaceError,
    OperationalError,
    connection,
    transaction,
)

from kapi.errors import StatusError
from kapi.lifecycle import aggregation, feed, gc, namespaces, objects, wakeup, work
from kapi.observability import origin
from kapi.observability.context import (
    current_request_id,
    reset_request_id,
    set_request_id,
)
from kapi.registry.store import Registry

__all__ = ["BATCH", "GROUP", "GROUP_SECONDS", "run_batch", "sweep"]

log = logging.getLogger(__name__)
#: One line per work item handled (kind, object, outcome, duration, request id).
item_log = logging.getLogger("kapi.work")

BATCH = 200
#: Delete items committed together, and the longest a group stays open.
GROUP = 50
GROUP_SECONDS = 0.05


class _Group:
    """One open transaction over consecutive ``delete`` items (see above)."""

    def __init__(self) -> None:
        self._atomic = None
        self._opened = 0.0
        #: The items handled in the open transaction.
        self.members: list[work.Item] = []

    def enter(self, item: work.Item) -> None:
        """Before handling ``item``: close the group unless ``item`` joins it."""
        if self._atomic is not None and (
            item.kind != "delete"
            or len(self.members) >= GROUP
            or time.monotonic() - self._opened > GROUP_SECONDS
        ):
            self.close()
        if self._atomic is None and item.kind == "delete":
            self._atomic = transaction.atomic()
            self._atomic.__enter__()
            self._opened = time.monotonic()
        if self._atomic is not None:
            self.members.append(item)

    def item(self):
        """Each item of a group in its own savepoint: a failing one rolls back alone."""
        return transaction.atomic() if self._atomic is not None else nullcontext()

    def close(self) -> None:
        """Commit the open group, if any."""
        if self._atomic is not None:
            self._atomic.__exit__(None, None, None)
            self._atomic = None
        self.members = []

    def abort(self, exc: BaseException) -> list[work.Item]:
        """Roll back the open group (if any); returns the items it undid."""
        undone, self.members = self.members, []
        atomic, self._atomic = self._atomic, None
        if atomic is not None:
            try:
                atomic.__exit__(type(exc), exc, exc.__traceback__)
            except DatabaseError:
                log.warning("could not roll back a lifecycle group", exc_info=True)
        return undone


def run_batch(limit: int = BATCH) -> int:
    """Claim and handle one batch; returns how many items it claimed."""
    items = work.claim(limit)
    if not items:
        return 0
    # Should this worker die with the claims, the timer finds them expired.
    wakeup.arm_timer(work.CLAIM_SECONDS)
    registry = Registry()
    started = time.monotonic()
    finished: list[work.Item] = []
    undone: list[work.Item] = []
    group = _Group()
    index = 0
    try:
        for index in range(len(items)):
            item = items[index]
            if time.monotonic() - started > work.CLAIM_SECONDS / 3:
                break
            group.enter(item)
            try:
                with group.item():
                    again = _handle_as_its_request(item, registry)
            except (InterfaceError, OperationalError):
                raise  # the connection is gone: the task's retry takes over
            except Exception as exc:
                if isinstance(exc, DatabaseError) and connection.needs_rollback:
                    raise
                log.warning(
                    "lifecycle %s %s failed: %s",
                    item.kind,
                    item.uid,
                    exc,
                    exc_info=not isinstance(exc, (StatusError, objects.TypeNotServed)),
                )
                backoff = min(60.0, 0.5 * 2 ** min(item.attempts, 7))
                work.postpone(item, backoff)
                wakeup.arm_timer(backoff)
                continue
            if again is None:
                finished.append(item)
            else:
                work.postpone(item, again)
                wakeup.arm_timer(again)
        else:
            index = len(items)
        group.close()
    except BaseException as exc:
        # The open group's writes are rolled back: its items are handed back
        # (claimable again at once), not finished.
        undone = group.abort(exc)
        finished = [i for i in finished if all(i is not u for u in undone)]
        raise
    finally:
        # Whatever happens, hand back what was not started (a SIGKILL is the only
        # way to leave claims behind, and those expire).
        try:
            work.finish(finished)
            work.release(items[index:] + undone)
        except DatabaseError:
            log.warning(
                "could not release lifecycle claims; they will expire", exc_info=True
            )
    if len(items) == limit:
        wakeup.wake_workers()
    return len(items)


#: Items about an object's own current state, not about a change asked for.
_STATE_KINDS = frozenset({"namespace", "owner"})


def _handle_as_its_request(item: work.Item, registry: Registry) -> float | None:
    """``_handle`` with the item's request id current (its log lines, the
    work it asks for and the writes it makes carry it) and one log line."""
    request_id = item.request_id
    if item.kind in _STATE_KINDS:
        # The item acts on the object's state as it is now (a namespace being
        # terminated, an owner being deleted): the request that last wrote it
        # caused that, even if the item was asked for by an earlier write.
        request_id = origin.latest(item.uid) or request_id
    token = set_request_id(request_id or current_request_id())
    started = time.perf_counter()
    outcome = "error"
    try:
        again = _handle(item, registry)
        outcome = "done" if again is None else "again"
        return again
    finally:
        item_log.info(
            "lifecycle item",
            extra={"fields": {
                "kind": item.kind, "group": item.group, "resource": item.resource,
                "namespace": item.namespace, "name": item.name, "uid": item.uid,
                "attempt": item.attempts, "outcome": outcome,
                "duration": round(time.perf_counter() - started, 6),
            }},
        )
        reset_request_id(token)


def _handle(item: work.Item, registry: Registry) -> float | None:
    """Seconds until the item should run again, or None when it is done."""
    if item.kind == "attempt":
        gc.attempt(item.uid, registry)
        return None
    if item.kind == "owner":
        return 0.0 if gc.owner(item.uid, registry) else None
    if item.kind == "namespace":
        return namespaces.process(item.uid, registry)
    if item.kind == "delete":
        namespaces.delete_content_item(item, registry)
        return None
    if item.kind == "aggregate":
        aggregation.sync(item.name, item.uid, registry)
        return None
    log.error("unknown lifecycle work kind %r", item.kind)
    return None


def sweep(resync: bool = False) -> bool:
    """The lifecycle's timer (``kapi.duetimer``) and its slow safety beat:
    catch the feed up, re-ask for what objects say is unfinished (``resync``),
    wake workers if anything is due, and arm the timer for the next item that
    is not due yet. Returns whether it found anything to do."""
    found = False
    if feed.run():
        wakeup.wake_feed_now()
        found = True
    if resync:
        feed.resync()
        origin.forget_old()
    if work.any_due():
        wakeup.wake_workers(2)
        found = True
    wait = work.next_wait()
    if wait is not None:
        wakeup.arm_timer(wait)
    return found
