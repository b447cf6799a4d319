"""Running claimed keys: one batch per task, the rest handed back.

Keys of long-running controllers (a Sync's reconcile) are claimed one at a
time (``run_long``) and their lease is extended while they run (``_Lease``),
so they never hold up a batch of short ones. Any other batch is claimed in one
statement (``workqueue.claim``), each key reconciled
by its controller, and the batch finished in one statement. A batch that runs
past a third of the lease hands its unstarted keys back rather than risk
their leases running out under it. A reconcile that raises is requeued with
exponential backoff (its intent stays in the table); one that returns
``requeue_after`` is requeued then.

Consecutive keys of a ``grouped`` controller (a namespace's content) commit
together, up to ``GROUP`` keys or ``GROUP_SECONDS``, each in its own savepoint:
one commit, hence one WAL flush, per group instead of two per object (issue
#20: a purge of 10,000 objects spent its time waiting on fsync). The group
stays short because every consistent read waits for a transaction that took a
resourceVersion (storage's ``current_revision``).
"""

from __future__ import annotations

import logging
import threading
import time
from contextlib import nullcontext

from django.db import (
    DatabaseError,
    InterfaceError,
    OperationalError,
    connection,
    transaction,
)

from kapi.controllers import feed, wakeup, workqueue
from kapi.controllers.controller import Controller, Item, controller_for, long_running
from kapi.observability import origin
from kapi.observability.context import (
    current_request_id,
    reset_request_id,
    set_request_id,
)
from kapi.registry.store import Registry

__all__ = ["BATCH", "GROUP", "GROUP_SECONDS", "run_batch", "run_long", "sweep"]

log = logging.getLogger(__name__)
#: One line per key reconciled (controller, object, outcome, duration, request id).
item_log = logging.getLogger("kapi.work")

BATCH = 200
#: Keys of a grouped controller committed together, and the longest a group stays open.
GROUP = 50
GROUP_SECONDS = 0.05


class _Group:
    """One open transaction over consecutive keys of a grouped controller."""

    def __init__(self) -> None:
        self._atomic = None
        self._opened = 0.0
        self._controller = ""
        #: The items reconciled in the open transaction.
        self.members: list[Item] = []

    def enter(self, item: Item, controller: Controller) -> None:
        """Before reconciling ``item``: close the group unless ``item`` joins it."""
        if self._atomic is not None and (
            item.controller != self._controller
            or len(self.members) >= GROUP
            or time.monotonic() - self._opened > GROUP_SECONDS
        ):
            self.close()
        if self._atomic is None and controller.grouped:
            self._atomic = transaction.atomic()
            self._atomic.__enter__()
            self._opened = time.monotonic()
            self._controller = item.controller
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

    def abort(self, exc: BaseException) -> list[Item]:
        """Roll back the open group (if any); returns the items it undid."""
        undone, self.members = self.members, []
        atomic, self._atomic = self._atomic, None
        if atomic is not None:
            try:
                atomic.__exit__(type(exc), exc, exc.__traceback__)
            except DatabaseError:
                log.warning("could not roll back a group of work items", exc_info=True)
        return undone


def _order(items: list[Item]) -> list[Item]:
    """Keys of ``first`` controllers first (they ask for more work), then in id order."""

    def first(item: Item) -> bool:
        controller = controller_for(item.controller)
        return controller is not None and controller.first

    return sorted(items, key=lambda i: (not first(i), i.id))


class _Lease:
    """Extends the lease of ``items`` every third of its length while the
    block runs, on a connection of its own (a thread). A killed worker's
    thread dies with it, and the lease runs out as any other."""

    def __init__(self, items: list[Item]) -> None:
        self._items = items
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._keep, name="kapi-lease", daemon=True)

    def __enter__(self) -> None:
        self._thread.start()

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _keep(self) -> None:
        try:
            while not self._stop.wait(workqueue.LEASE_SECONDS / 3):
                try:
                    workqueue.extend(self._items)
                except DatabaseError:
                    log.warning("could not extend a lease", exc_info=True)
        finally:
            connection.close()  # this thread's own connection


def run_long() -> int:
    """Claim and reconcile one key of a long-running controller, if one is
    due; returns how many it claimed (0 or 1)."""
    names = long_running()
    if not names:
        return 0
    items = workqueue.claim(1, names, only=True)
    if not items:
        return 0
    with _Lease(items):
        _run(items)
    if workqueue.any_due():
        wakeup.wake_workers()
    return 1


def run_batch(limit: int = BATCH) -> int:
    """Claim and reconcile one batch of keys of the other controllers;
    returns how many it claimed."""
    items = _order(workqueue.claim(limit, long_running()))
    if not items:
        return 0
    _run(items)
    if len(items) == limit:
        wakeup.wake_workers()
    return len(items)


def _run(items: list[Item]) -> None:
    # Should this worker die with the leases, the timer finds them expired.
    wakeup.arm_timer(workqueue.LEASE_SECONDS)
    registry = Registry()
    started = time.monotonic()
    finished: list[Item] = []
    undone: list[Item] = []
    group = _Group()
    index = 0
    try:
        for index in range(len(items)):
            item = items[index]
            if time.monotonic() - started > workqueue.LEASE_SECONDS / 3:
                break
            controller = controller_for(item.controller)
            if controller is None:
                log.error("work item of unknown controller %r dropped", item.controller)
                finished.append(item)
                continue
            group.enter(item, controller)
            try:
                with group.item():
                    again = _reconcile_as_its_request(controller, item, registry)
            except (InterfaceError, OperationalError):
                raise  # the connection is gone: the task's retry takes over
            except Exception as exc:
                if isinstance(exc, DatabaseError) and connection.needs_rollback:
                    raise
                log.warning(
                    "%s %s failed: %s",
                    item.controller,
                    item.key,
                    exc,
                    exc_info=not isinstance(exc, controller.quiet_errors),
                )
                delay = workqueue.backoff(
                    item.attempts, controller.backoff_base, controller.backoff_max
                )
                workqueue.requeue(item, delay, failed=True)
                wakeup.arm_timer(delay)
                continue
            if again is None:
                finished.append(item)
            else:
                workqueue.requeue(item, again)
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
        # Whatever happens, hand back what was not started (a SIGKILL is the
        # only way to leave leases behind, and those expire).
        try:
            workqueue.finish(finished)
            workqueue.release(items[index:] + undone)
        except DatabaseError:
            log.warning("could not release work item leases; they will expire", exc_info=True)


def _reconcile_as_its_request(
    controller: Controller, item: Item, registry: Registry
) -> float | None:
    """``controller.reconcile`` with the item's request id current (its log
    lines, the work it asks for and the writes it makes carry it) and one log line."""
    request_id = item.request_id
    if controller.acts_on_current_state:
        # The item acts on the object as it is now (a namespace being
        # terminated, an owner being deleted): the request that last wrote it
        # caused that, even if the item was asked for by an earlier write.
        request_id = origin.latest(item.key) or request_id
    token = set_request_id(request_id or current_request_id())
    started = time.perf_counter()
    outcome = "error"
    try:
        again = controller.reconcile(item, registry)
        outcome = "done" if again is None else "again"
        return again
    finally:
        item_log.info(
            "work item",
            extra={"fields": {
                "kind": item.controller, "key": item.key,
                "group": item.group, "resource": item.resource,
                "namespace": item.namespace, "name": item.name,
                "attempt": item.attempts, "outcome": outcome,
                "duration": round(time.perf_counter() - started, 6),
            }},
        )
        reset_request_id(token)


def sweep(resync: bool = False) -> bool:
    """The runtime's timer (``kapi.duetimer``) and its slow safety beat: catch
    every feed up, have every watch re-request what the objects say is
    unfinished (``resync``), wake workers if anything is due, and arm the timer
    for the first key not due yet. Returns whether it found anything to do."""
    found = False
    for name in feed.feeds():
        found = feed.catch_up(name) or found
    if resync:
        for watches in feed.feeds().values():
            for watch in watches:
                watch.resync(False)
        origin.forget_old()
    if workqueue.any_due():
        wakeup.wake_workers(2)
        found = True
    wait = workqueue.next_wait()
    if wait is not None:
        wakeup.arm_timer(wait)
    return found
