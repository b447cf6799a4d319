"""The audit log file: appended to by every API process, rotated by size.

As kube-apiserver's ``--audit-log-maxsize``, ``--audit-log-maxbackup`` and
``--audit-log-maxage`` (lumberjack underneath), with the same meaning and file
names:

* ``KAPI_AUDIT_LOG_MAXSIZE``: megabytes (MiB) a file may reach before it is
  rotated (default 100; 0: never rotate);
* ``KAPI_AUDIT_LOG_MAXBACKUP``: rotated files kept (default 5; 0: no limit);
* ``KAPI_AUDIT_LOG_MAXAGE``: days a rotated file is kept (default 30; 0: no limit).

So by default the log takes at most 600 MiB. A rotated file is renamed to
``audit-2006-01-02T15-04-05.000.log`` (the time of rotation, UTC) next to the
log, and a new log is started.

Several processes append at once. Each line is one ``write`` on an
``O_APPEND`` descriptor (lines never interleave), made while holding an
``flock`` on the log's directory, after checking that the descriptor is still
the current file and that the line fits (else rotating first). So no line is
written to a file after it was rotated away, none is lost when a backup is
removed, and no file passes the limit. The lock is held for a ``stat`` (the
path's inode and size) and a ``write``: microseconds. Within a process a thread lock
serialises writers (an ``flock`` is shared by every thread of a process), and
a forked child opens its own descriptors (an inherited one would share the
parent's lock).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from kapi import pid

__all__ = ["AuditFile", "Limits", "backups", "limits_from_env"]

MIB = 1024 * 1024
_STAMP = "%Y-%m-%dT%H-%M-%S"


@dataclass(frozen=True)
class Limits:
    """Rotation limits; 0 means no limit, as kube-apiserver's flags."""

    max_bytes: int = 100 * MIB
    max_backups: int = 5
    max_age_days: float = 30


def limits_from_env(environ: dict[str, str] | None = None) -> Limits:
    env = os.environ if environ is None else environ
    return Limits(
        max_bytes=int(float(env.get("KAPI_AUDIT_LOG_MAXSIZE", "100")) * MIB),
        max_backups=int(env.get("KAPI_AUDIT_LOG_MAXBACKUP", "5")),
        max_age_days=float(env.get("KAPI_AUDIT_LOG_MAXAGE", "30")),
    )


def _backup_pattern(path: Path) -> re.Pattern[str]:
    stem, ext = os.path.splitext(path.name)
    return re.compile(
        re.escape(stem) + r"-(\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3})" + re.escape(ext) + "$"
    )


def backups(path: Path) -> list[tuple[datetime, Path]]:
    """The rotated files of ``path``, newest first."""
    pattern = _backup_pattern(path)
    found = []
    for entry in path.parent.iterdir():
        match = pattern.match(entry.name)
        if match:
            when = datetime.strptime(match.group(1), _STAMP + ".%f").replace(tzinfo=UTC)
            found.append((when, entry))
    return sorted(found, reverse=True)


class AuditFile:
    """Appends lines to one log file shared with other processes."""

    def __init__(self, path: Path, limits: Limits) -> None:
        self.path = path
        self.limits = limits
        self._lock = threading.Lock()
        self._pid = -1
        self._fd = -1
        self._ino = -1
        self._dir_fd = -1

    def write(self, line: bytes) -> None:
        with self._lock:
            if self._pid != pid.current():
                self._open_dir()
                with self._flock(fcntl.LOCK_EX):
                    self._prune(time.time())  # maxage also holds on a quiet server
            with self._flock(fcntl.LOCK_EX):
                size = self._follow()
                if self._full(size, len(line)):
                    self._rotate()
                os.write(self._fd, line)

    # -- internals; called with the thread lock held --------------------------

    def _open_dir(self) -> None:
        # After a fork the inherited descriptors share the parent's flock.
        self._pid = pid.current()
        self._fd = self._ino = -1
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._dir_fd = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY)

    @contextlib.contextmanager
    def _flock(self, how: int):
        fcntl.flock(self._dir_fd, how)
        try:
            yield
        finally:
            fcntl.flock(self._dir_fd, fcntl.LOCK_UN)

    def _follow(self) -> int:
        """Make our descriptor the current file (another process may have
        rotated); returns the file's size. One ``stat`` of the path tells
        both while it is still our file (the lock is held: nothing else
        writes meanwhile), so a line costs no ``fstat`` of its own."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            st = None
        if st is not None and st.st_ino == self._ino:
            return st.st_size
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        if self._fd >= 0:
            os.close(self._fd)
        st = os.fstat(fd)
        self._fd, self._ino = fd, st.st_ino
        return st.st_size

    def _full(self, size: int, adding: int) -> bool:
        if not self.limits.max_bytes:
            return False
        return size > 0 and size + adding > self.limits.max_bytes

    def _rotate(self) -> None:
        """Rename the current file to a backup and start a new one (exclusive lock held)."""
        now = datetime.now(UTC)
        while True:
            target = self._backup_name(now)
            if not target.exists():
                break
            now += timedelta(milliseconds=1)
        os.rename(self.path, target)
        self._follow()
        self._prune(time.time())

    def _backup_name(self, when: datetime) -> Path:
        stem, ext = os.path.splitext(self.path.name)
        stamp = when.strftime(_STAMP) + f".{when.microsecond // 1000:03d}"
        return self.path.with_name(f"{stem}-{stamp}{ext}")

    def _prune(self, now: float) -> None:
        old = backups(self.path)
        doomed = []
        if self.limits.max_backups:
            doomed += old[self.limits.max_backups:]
        if self.limits.max_age_days:
            cutoff = now - self.limits.max_age_days * 86400
            doomed += [b for b in old if b[0].timestamp() < cutoff]
        for _, entry in set(doomed):
            with contextlib.suppress(FileNotFoundError):
                entry.unlink()
