"""A small supervisor for ``serve``'s child processes (API server, Celery).

Each child runs in its own session and process group, so that a terminal's
Ctrl-C reaches only ``serve``, which then stops the children in order, and so
that a child's own children (uvicorn workers, Celery pool processes) can be
killed with it if it does not stop in time.

Stopping is two-phase: SIGTERM to every leader at once (each runs its own
graceful shutdown), then SIGKILL to the whole group of any child still running
after its grace period, and to any group members a leader left behind.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["Child", "Supervisor"]


@dataclass
class Child:
    """One supervised process and how long it may take to stop."""

    name: str
    argv: list[str]
    grace: float
    proc: subprocess.Popen = field(repr=False)

    @property
    def pid(self) -> int:
        return self.proc.pid


class Supervisor:
    """Starts children, reports the first one that exits, stops them all."""

    def __init__(self) -> None:
        self.children: list[Child] = []

    def start(
        self,
        name: str,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        grace: float = 10,
    ) -> Child:
        proc = subprocess.Popen(
            list(argv),
            env=dict(env),
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        child = Child(name, list(argv), grace, proc)
        self.children.append(child)
        return child

    def exited(self) -> Child | None:
        """The first child that has exited, if any."""
        for child in self.children:
            if child.proc.poll() is not None:
                return child
        return None

    def stop(self) -> None:
        """Stop every child: SIGTERM, wait its grace, then SIGKILL its group."""
        for child in self.children:
            if child.proc.poll() is None:
                _signal_leader(child, signal.SIGTERM)
        start = time.monotonic()
        for child in self.children:
            remaining = child.grace - (time.monotonic() - start)
            try:
                child.proc.wait(timeout=max(remaining, 0.1))
            except subprocess.TimeoutExpired:
                _signal_group(child, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.proc.wait(timeout=5)
        for child in self.children:
            # Orphans: pool workers or uvicorn workers whose leader died first.
            _signal_group(child, signal.SIGKILL)


def _signal_leader(child: Child, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        child.proc.send_signal(sig)


def _signal_group(child: Child, sig: int) -> None:
    # The group id is the leader's pid (start_new_session); a group with no
    # members left raises ProcessLookupError.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, sig)
