"""Waking the runtime's workers, and its timer, once the current transaction commits.

Keys due now wake workers (a ``kapi.controllers.work`` message each); keys due
later arm the runtime's due timer (``kapi.duetimer``), whose sweep wakes
workers when they come due. Nothing runs on a fixed tick.
"""

from __future__ import annotations

from kapi.wakeflag import send_on_commit

__all__ = ["TIMER", "arm_timer", "wake_workers"]

#: The name of the runtime's timer (``kapi.duetimer``).
TIMER = "controllers"


def wake_workers(count: int = 1) -> None:
    """Have ``count`` workers claim due keys, after the commit."""
    from kapi.controllers.tasks import work

    for _ in range(count):
        send_on_commit(work)


def arm_timer(seconds: float) -> None:
    """Have the runtime's sweep run in ``seconds`` (unless it runs sooner)."""
    from kapi import duetimer
    from kapi.controllers.tasks import sweep

    duetimer.arm(TIMER, sweep, seconds)
