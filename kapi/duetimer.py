"""A timer set to the next due time of a work table, instead of a fixed beat.

Work that waits (a Sync's interval, a retry's backoff, a lifecycle item asked
to run again later) is a due time in a table. Rather than a beat reading the
table every second, whoever sets a due time calls ``arm(name, task, seconds)``:
one message of ``task`` is sent with that countdown, unless one is already out
that fires no later (the ``kapi_due_timer`` row of ``name`` says when), so a
burst of postponements sends one message. The task calls ``fired(name)``
first, does its sweep, and arms again for the earliest due time left.

A message lost with its worker or its broker leaves the row's time in the
past: the next ``arm`` sends a new one, and each timer's task also runs from
a slow safety beat (and once when a worker starts) that re-arms it.
"""

from __future__ import annotations

import logging

from django.db import DatabaseError, connection, transaction

__all__ = ["LOST_AFTER_SECONDS", "MAX_COUNTDOWN_SECONDS", "arm", "fired"]

log = logging.getLogger(__name__)

#: A countdown longer than this is cut (the task re-arms when it fires): the
#: broker redelivers a message held unacknowledged for too long.
MAX_COUNTDOWN_SECONDS = 300.0
#: A message that should have fired this long ago counts as lost.
LOST_AFTER_SECONDS = 5.0

_ARM = """
INSERT INTO kapi_due_timer (name, armed_for)
VALUES (%s, now() + make_interval(secs => %s))
ON CONFLICT (name) DO UPDATE SET armed_for = EXCLUDED.armed_for
 WHERE kapi_due_timer.armed_for IS NULL
    OR kapi_due_timer.armed_for > EXCLUDED.armed_for
    OR kapi_due_timer.armed_for < now() - make_interval(secs => %s)
RETURNING 1
"""


def arm(name: str, task, seconds: float) -> None:
    """Have ``task`` run in ``seconds`` (cut to ``MAX_COUNTDOWN_SECONDS``),
    unless its message already fires no later. Sent after commit; never raises
    (a timer that cannot be armed leaves the safety beat)."""
    seconds = max(0.0, min(float(seconds), MAX_COUNTDOWN_SECONDS))
    try:
        with connection.cursor() as cur:
            cur.execute(_ARM, [name, seconds, LOST_AFTER_SECONDS])
            armed = cur.fetchone() is not None
    except DatabaseError:
        log.warning("could not arm the %s timer", name, exc_info=True)
        return
    if armed:

        def send() -> None:
            try:
                task.apply_async(countdown=seconds)
            except Exception:  # the broker is down: the safety beat re-arms
                log.warning("could not send the %s timer", name, exc_info=True)

        transaction.on_commit(send)


def fired(name: str) -> None:
    """The timer's task runs: forget an armed time that has come (a later one
    stays: its message is still out)."""
    with connection.cursor() as cur:
        cur.execute(
            "UPDATE kapi_due_timer SET armed_for = NULL"
            " WHERE name = %s AND armed_for <= now() + interval '50 milliseconds'",
            [name],
        )
