"""``serve``'s log when its stdout or stderr is a regular file: bounded.

``serve`` and every child write their JSON lines to the stdout and stderr that
``serve`` was started with. Under Docker or systemd those are pipes and the
collector rotates (``docker-compose.yml`` keeps 3 x 10 MB); but
``serve > kapi.log`` would grow for ever. So, as logrotate's ``copytruncate``:
when the file passes ``KAPI_LOG_MAXSIZE`` MiB (default 100; 0: never), it is
copied to ``<file>.1`` (replacing the previous one) and truncated, so the log
takes at most about twice that.

The shell opens ``>`` without ``O_APPEND``: every process would keep writing at
its own offset after a truncation, leaving a hole of NUL bytes the size of the
old file. :meth:`LogFiles.start` therefore sets ``O_APPEND`` on the shared
open file (the flag belongs to the open file description, so it holds for
every child at once). A line written during the copy itself may be lost, as
with ``copytruncate``; the audit log, which must lose nothing, has its own
rotation (:mod:`kapi.auth.auditlog`).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import stat
import time
from collections.abc import Mapping
from pathlib import Path

__all__ = ["LogFiles"]

MIB = 1024 * 1024
# An fstat per check: cheap enough to run with serve's 0.2 s loop, so a
# burst of requests cannot carry the file far past its limit between checks.
CHECK_SECONDS = 0.2


class LogFiles:
    """The regular files among ``fds``; :meth:`check` trims those too large."""

    def __init__(self, max_bytes: int, fds: tuple[int, ...] = (1, 2)) -> None:
        self.max_bytes = max_bytes
        self.fds = fds
        self.files: dict[tuple[int, int], tuple[int, Path]] = {}
        self._next = 0.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LogFiles:
        env = os.environ if environ is None else environ
        return cls(int(float(env.get("KAPI_LOG_MAXSIZE", "100")) * MIB))

    def start(self) -> None:
        """Find the regular files among the descriptors; make them append-only."""
        if not self.max_bytes:
            return
        for fd in self.fds:
            try:
                st = os.fstat(fd)
                path = Path(os.readlink(f"/proc/self/fd/{fd}"))
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) in self.files:
                continue
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
            fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_APPEND)
            self.files[(st.st_dev, st.st_ino)] = (fd, path)

    def check(self, now: float | None = None) -> None:
        """Copy and truncate each file past the limit (at most every CHECK_SECONDS)."""
        now = time.monotonic() if now is None else now
        if not self.files or now < self._next:
            return
        self._next = now + CHECK_SECONDS
        for fd, path in self.files.values():
            try:
                size = os.fstat(fd).st_size
                if size <= self.max_bytes:
                    continue
                backup = path.with_name(path.name + ".1")
                tmp = path.with_name(f".{path.name}.1.tmp")
                with open(path, "rb") as src, open(tmp, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                os.replace(tmp, backup)
                os.ftruncate(fd, 0)
            except OSError:
                continue
