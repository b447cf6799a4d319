"""Whether a process id still names a running process."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["alive"]


def alive(pid: int) -> bool:
    """True while ``pid`` runs (also when it belongs to another user); False
    once it exited, including as a zombie its parent has not reaped yet."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers signal 0; it has exited for our purposes.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True
