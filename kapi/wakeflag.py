"""A flag that turns a burst of writes into one run of a scanner.

The lifecycle's feed and the sync's change scan each read the change log after
a cursor; writes that matter to them wake them. A writer flips the cursor's
``wanted`` flag (row 2 of the cursor table, so that writers never wait on the
scanner's transaction, which locks row 1) and enqueues the scanner only when it
flipped it, so a burst of writes sends one task, not one per write; the
scanner clears the flag before each read, so a write that lands after a read
always gets a fresh run. Inside a transaction the flag is flipped once, after
the commit: flipped inside, its row lock would be held to the transaction's
end, and every other writer that matters, and the scanner, would wait for it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import DatabaseError, connection, transaction

__all__ = ["WakeFlag", "send_on_commit"]

log = logging.getLogger(__name__)


class WakeFlag:
    """The ``wanted`` flag in row 2 of ``table``; ``task()`` returns the Celery
    task to enqueue when a wake flips it (imported late: tasks import models)."""

    def __init__(self, table: str, task: Callable[[], Any], what: str) -> None:
        self.table, self.task, self.what = table, task, what
        self._after_commit = self._flip  # one bound method, so a transaction queues it once

    def wake(self) -> None:
        if connection.in_atomic_block:
            if not any(entry[1] is self._after_commit for entry in connection.run_on_commit):
                transaction.on_commit(self._after_commit)
            return
        self._flip()

    def _flip(self) -> None:
        try:
            with connection.cursor() as cur:
                cur.execute(f"UPDATE {self.table} SET wanted = true WHERE id = 2 AND NOT wanted")
                flipped = cur.rowcount == 1
        except DatabaseError:  # e.g. before the migration: the safety sweep catches up
            log.warning("could not flag %s", self.what, exc_info=True)
            return
        if flipped:
            send_on_commit(self.task())


def send_on_commit(task) -> None:
    """Enqueue ``task`` once the current transaction (if any) commits; a broker
    that is down only leaves the work to the safety sweeps."""

    def send() -> None:
        try:
            task.delay()
        except Exception:  # the broker is down: beat's sweep will run it
            log.warning("could not enqueue %s", task.name, exc_info=True)

    transaction.on_commit(send)
