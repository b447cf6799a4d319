"""A flag that turns a burst of writes into one run of a scanner.

The controller runtime's change feeds (``kapi.controllers.feed``) read the
change log after a cursor; writes that matter to them wake them. A writer
flips the scanner's ``wanted`` flag (its row of ``kapi_wake_flag``, apart
from the cursor, so that writers never wait on the scanner's transaction) and
enqueues the scanner only when it flipped it and no run holds the scanner's
advisory lock (``lock_key``): a burst of writes sends one task, and writes
during a run send none. The scanner clears the flag before each read and,
once it has released its lock, looks at the flag again (``wanted``, which
waits for a flip in flight): a write that lands after a read always gets a
fresh run, sent either by its writer (the lock was free) or by the scanner.
Inside a transaction the flag is flipped once, after the commit: flipped
inside, its row lock would be held to the transaction's end, and every other
writer that matters, and the scanner, would wait for it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from django.db import DatabaseError, connection, transaction

__all__ = ["WakeFlag", "send_on_commit"]

log = logging.getLogger(__name__)


# Flipped only from false (or absent): a burst of wakes sends one task. The
# lock is probed (taken and at once released) after the flip, in the same
# statement: a scanner that holds it looks at the flag after releasing it.
_FLIP = """
WITH flip AS (
  INSERT INTO kapi_wake_flag (name, wanted) VALUES (%s, true)
  ON CONFLICT (name) DO UPDATE SET wanted = true WHERE NOT kapi_wake_flag.wanted
  RETURNING 1
)
SELECT CASE WHEN pg_try_advisory_lock(%s) THEN pg_advisory_unlock(%s) ELSE false END FROM flip
"""


class WakeFlag:
    """The ``wanted`` flag ``name`` of ``kapi_wake_flag``; ``task()`` returns
    the Celery task to enqueue when a wake flips it (imported late: tasks import
    models); ``lock_key``: the session advisory lock a run of the scanner holds."""

    def __init__(self, name: str, task: Callable[[], Any], what: str, lock_key: int) -> None:
        self.name, self.task, self.what, self.lock_key = name, task, what, lock_key
        self._after_commit = self._flip  # one bound method, so a transaction queues it once

    def clear(self) -> None:
        """The scanner is about to read: later wakes must send it again."""
        # The row is made here if no write has made it yet: a writer's flip
        # in flight is then an update of it, which ``wanted`` waits for (an
        # insert in flight it could not see).
        with connection.cursor() as cur:
            cur.execute(
                "INSERT INTO kapi_wake_flag (name, wanted) VALUES (%s, false)"
                " ON CONFLICT (name) DO UPDATE SET wanted = false WHERE kapi_wake_flag.wanted",
                [self.name],
            )

    def wanted(self) -> bool:
        """Whether a wake came since the last ``clear``; a flip in flight is
        waited for (``FOR UPDATE``), since its writer may have found the lock
        still held and sent nothing."""
        with connection.cursor() as cur:
            cur.execute(
                "SELECT wanted FROM kapi_wake_flag WHERE name = %s FOR UPDATE", [self.name]
            )
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
                cur.execute(_FLIP, [self.name, self.lock_key, self.lock_key])
                row = cur.fetchone()
        except DatabaseError:  # e.g. before the migration: the safety sweep catches up
            log.warning("could not flag %s", self.what, exc_info=True)
            return
        if row is not None and row[0]:  # flipped, and no run will look again
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
