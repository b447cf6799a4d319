"""Each API worker process on a CPU of its own, where the workers cover the CPUs.

A worker's threads (its event loop and its request threads) run Python under
one interpreter lock: together they use about one core. Left free, the
scheduler moves them from core to core as PostgreSQL's backends, Celery and
the clients come and go, and a thread that lands on the other core finds
Django's, DRF's and kapi's code and data in neither of that core's private
caches. On the 2-core machine, with ``kbench`` at c=16 and nothing else
changed, pinning each of the two workers to a core of its own took the API
processes' CPU per create from 1.24-1.33 ms to 1.09-1.12 ms and served 14-24%
more creates and 17-22% more updates per second (``bench/README.md``,
session 12). PostgreSQL, Redis and Celery stay free to run on any core.

``KAPI_API_CPU_AFFINITY``: ``auto`` (the default) pins when the workers are at
least as many as the CPUs this process may use, the case measured; ``on``
pins whatever the counts; ``off`` never pins. Workers take CPUs in turn: a
worker claims the first free *slot* (an abstract Unix socket named after the
supervisor and the slot number, which the kernel releases when the worker
dies, so a replacement worker takes its predecessor's slot) and runs on
slot modulo the number of CPUs.
"""

from __future__ import annotations

import logging
import os
import socket

__all__ = ["pin_worker"]

log = logging.getLogger("uvicorn.error")

_MODES = ("auto", "on", "off")

#: The slot this process holds: its socket (kept open for as long as the
#: process lives) and its number.
_held: tuple[socket.socket, int] | None = None


def pin_worker(workers: int, mode: str | None = None) -> int | None:
    """Pin every thread of this worker to one CPU (threads started later
    inherit it); returns that CPU, or None when it leaves the worker free."""
    global _held
    mode = (mode or os.environ.get("KAPI_API_CPU_AFFINITY") or "auto").strip().lower()
    if mode not in _MODES:
        log.warning("KAPI_API_CPU_AFFINITY=%r is not one of %s: not pinning", mode, ", ".join(_MODES))
        return None
    if mode == "off" or not hasattr(os, "sched_setaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    if mode == "auto" and len(cpus) > workers:
        return None
    if _held is None:
        _held = _claim_slot(limit=max(workers, len(cpus)) * 2)
        if _held is None:
            return None
    cpu = cpus[_held[1] % len(cpus)]
    for tid in os.listdir("/proc/self/task"):
        try:
            os.sched_setaffinity(int(tid), {cpu})
        except OSError:  # a thread that has just ended
            pass
    log.info("API worker %d runs on CPU %d (KAPI_API_CPU_AFFINITY=%s)", os.getpid(), cpu, mode)
    return cpu


def _claim_slot(limit: int) -> tuple[socket.socket, int] | None:
    """The first slot of this supervisor's workers that no live worker holds."""
    for slot in range(limit):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind(f"\0kapi-api-cpu/{os.getppid()}/{slot}".encode())
        except OSError:
            sock.close()
            continue
        return sock, slot
    return None
