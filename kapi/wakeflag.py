"""A flag that turns a burst of writes into one run of a scanner.

The controller runtime's change feeds (``kapi.controllers.feed``) and the
sync's change scan each read the change log after a cursor; writes that matter
to them wake them. A writer flips the scanner's ``wanted`` flag (its row of
``kapi_wake_flag``, apart from the cursor, so that writers never wait on the
scanner's transaction) and enqueues the scanner only when it flipped it, so a burst of writes sends one task, not one per write; the
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


# Flipped only from false (or absent): a burst of wakes sends one task.
_FLIP = """
INSERT INTO kapi_wake_flag (name, wanted) VALUES (%s, true)
ON CONFLICT (name) DO UPDATE SET wanted = true WHERE NOT kapi_wake_flag.wanted
RETURNING 1
"""


class WakeFlag:
    """The ``wanted`` flag ``name`` of ``kapi_wake_flag``; ``task()`` returns
    the Celery task to enqueue when a wake flips it (imported late: tasks import
    models)."""

    def __init__(self, name: str, task: Callable[[], Any], what: str) -> None:
        self.name, self.task, self.what = name, task, what
        self._after_commit = self._flip  # one bound method, so a transaction queues it once

    def clear(self) -> None:
        """The scanner is about to read: later wakes must send it again."""
        with connection.cursor() as cur:
            cur.execute(
                "UPDATE kapi_wake_flag SET wanted = false WHERE name = %s AND wanted",
                [self.name],
            )

    def wanted(self) -> bool:
        """Whether a wake came since the last ``clear``."""
        with connection.cursor() as cur:
            cur.execute("SELECT wanted FROM kapi_wake_flag WHERE name = %s", [self.name])
            row = cur.fetchone()
        return bool(row and row[0])

    def wake(self) -> None:
        if connection.in_atomic_block:
            if not any(entry[1] is self._after_commit for entry in connection.run_on_commit):
                transaction.on_commit(self._after_commit)
            return
        self._flip()

    def _flip(self) -> None:
        try:
            with connection.cursor() as cur:
                cur.execute(_FLIP, [self.name])
                flipped = cur.fetchone() is not None
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
