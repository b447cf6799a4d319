"""A timer set to the next due time of a work table, instead of a fixed beat.

Work that waits (a Sync's interval, a retry's backoff, a lifecycle item asked
to run again later) is a due time in a table. Rather than a beat reading the
table every second, whoever sets a due time calls ``arm(name, task, seconds)``:
the ``kapi_due_timer`` row of ``name`` takes the earlier of its time and the
new one, and when it moved earlier a ``NOTIFY kapi_due_timer`` goes out with
the commit. Celery beat runs :class:`Scheduler`, which sleeps on that channel
until the earliest armed time (or its own next entry), then sends the row's
task and clears the row. The task does its sweep and arms again for the
earliest due time left, so a burst of postponements costs one message.

No message waits in the broker for its time (a countdown would be held
unacknowledged by a worker, and lost or redelivered with it): an armed time
lives in PostgreSQL until it comes. A message lost later (its worker or the
broker killed) is covered by each timer's slow safety sweep in the beat
schedule, and a sweep when a worker starts.
"""

from __future__ import annotations

import logging
from contextlib import nullcontext

from celery.beat import PersistentScheduler
from django.db import DatabaseError, connection, transaction

__all__ = ["CHANNEL", "Scheduler", "arm"]

log = logging.getLogger(__name__)

CHANNEL = "kapi_due_timer"

_ARM = """
INSERT INTO kapi_due_timer (name, task, armed_for)
VALUES (%s, %s, now() + make_interval(secs => %s))
ON CONFLICT (name) DO UPDATE SET armed_for = EXCLUDED.armed_for, task = EXCLUDED.task
 WHERE kapi_due_timer.armed_for IS NULL OR kapi_due_timer.armed_for > EXCLUDED.armed_for
RETURNING 1
"""


def arm(name: str, task, seconds: float) -> None:
    """Have ``task`` sent in ``seconds`` unless timer ``name`` fires no later.
    Never raises (a timer that cannot be armed leaves the safety sweep)."""
    # In a transaction, a savepoint: a failure here cannot break it.
    guard = transaction.atomic() if connection.in_atomic_block else nullcontext()
    try:
        with guard, connection.cursor() as cur:
            cur.execute(_ARM, [name, task.name, max(0.0, float(seconds))])
            if cur.fetchone() is not None:
                # Delivered with the commit: the scheduler reads the new time.
                cur.execute(f"NOTIFY {CHANNEL}")
    except DatabaseError:
        log.warning("could not arm the %s timer", name, exc_info=True)


_DUE = """
WITH due AS (
  UPDATE kapi_due_timer SET armed_for = NULL
   WHERE armed_for <= clock_timestamp() RETURNING task
)
SELECT task, NULL::float8 FROM due
UNION ALL
SELECT NULL, EXTRACT(EPOCH FROM min(armed_for) - clock_timestamp())::float8
  FROM kapi_due_timer WHERE armed_for > clock_timestamp()
"""


class Scheduler(PersistentScheduler):
    """Celery beat's scheduler plus the due timers: sends each armed task when
    its time comes, and sleeps until the next time, a notification, or its
    own next entry, whichever is first."""

    #: After a database error, look again this soon.
    RETRY_SECONDS = 1.0

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._listener = None

    def tick(self, *args, **kwargs) -> float:
        interval = super().tick(*args, **kwargs)
        try:
            wait = self._send_due()
        except Exception:  # noqa: BLE001 - PostgreSQL away: retry soon
            log.warning("due timers: cannot read kapi_due_timer", exc_info=True)
            self._close()
            return min(interval, self.RETRY_SECONDS)
        if wait is not None:
            interval = min(interval, wait)
        if interval <= 0:
            return 0
        try:
            for _ in self._listener.notifies(timeout=interval, stop_after=1):
                pass
        except Exception:  # noqa: BLE001
            log.warning("due timers: listener failed", exc_info=True)
            self._close()
            return min(interval, self.RETRY_SECONDS)
        # Slept here already; beat's own short sleep lets it save its schedule.
        return 0.001

    def _send_due(self) -> float | None:
        """Send the tasks of timers whose time has come; seconds to the next."""
        conn = self._connect()
        wait = None
        for task, seconds in conn.execute(_DUE).fetchall():
            if task is not None:
                self.app.send_task(task)
            elif seconds is not None:
                wait = max(0.0, seconds)
        return wait

    def _connect(self):
        if self._listener is None or self._listener.closed:
            import psycopg

            from kapi.storage.changes import conninfo

            self._listener = psycopg.connect(conninfo(), autocommit=True)
            self._listener.execute(f"LISTEN {CHANNEL}")
        return self._listener

    def _close(self) -> None:
        if self._listener is not None:
            try:
                self._listener.close()
            except Exception:  # noqa: BLE001
                pass
        self._listener = None

    def close(self) -> None:
        self._close()
        super().close()
