"""``serve`` and everything it starts under Linux's ``SCHED_BATCH`` policy.

An API request crosses threads and processes several times (the event loop,
a request thread, its PostgreSQL backend, the watch-cache listeners and
their backends), and each wake-up of a thread may preempt whichever one is
running. On two CPUs busy with creates, ``perf`` put 11% of an API worker's
CPU in ``finish_task_switch`` (the scheduler's switch path), and an API
worker made about seven involuntary context switches per create. Under
``SCHED_BATCH`` (an ordinary time-sharing policy, the same share of the
CPUs for the same nice value, which any process may choose for itself) a
woken thread does not preempt the running one; it runs when that one
blocks or its slice ends. Measured on fresh servers, four alternating pairs
of 4,000 creates (c=16): 6-12% less server CPU per create, 5-11% more
creates a second; watch fan-out delay unchanged (1,000 watchers, p50 21.7
and 21.0 ms, p99 67.0 and 62.9 ms).

Set by ``serve`` on itself before it starts anything, so every child (the
API workers, Celery, the embedded PostgreSQL and Redis) inherits it.
``KAPI_SCHED_BATCH=0`` keeps the default policy.
"""

from __future__ import annotations

import os

__all__ = ["use_batch_policy"]


def use_batch_policy() -> str | None:
    """Put the calling thread (and what it starts from now on) under
    ``SCHED_BATCH`` unless ``KAPI_SCHED_BATCH=0``; a problem to report, or None."""
    if os.environ.get("KAPI_SCHED_BATCH", "1") == "0" or not hasattr(os, "SCHED_BATCH"):
        return None
    try:
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    except OSError as error:  # a sandbox that forbids it: run as before
        return f"could not use the SCHED_BATCH scheduling policy ({error.strerror}); running with the default"
    return None
