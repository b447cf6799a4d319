"""This process's id, without a system call each time it is asked.

Several per-process things (the audit file, the log buffer, the notifier,
the watch and list caches, the metric files) check the process id on every
use, to notice that they were inherited through a fork (Celery's prefork
pool) and must start afresh. ``os.getpid()`` is a system call each time:
8.6 of them per API request under ``strace``. The id is kept here and
refreshed in a forked child (``os.register_at_fork``); a spawned process
imports this module afresh. A leaf module: it imports nothing of kapi.
"""

from __future__ import annotations

import os

__all__ = ["current"]

_pid = os.getpid()


def _forked() -> None:
    global _pid
    _pid = os.getpid()


os.register_at_fork(after_in_child=_forked)


def current() -> int:
    """``os.getpid()``, as of this process's start or its fork."""
    return _pid
