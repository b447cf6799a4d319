"""Timestamps as kube writes them: RFC 3339 in UTC, ``2006-01-02T15:04:05Z``.

Every create stamps ``creationTimestamp`` and its managedFields entry, and
every write's audit event two more; ``datetime.strftime`` costs several
microseconds each time. The whole-seconds part is formatted once per second
and kept (one tuple, replaced whole, so threads never see half of it).
"""

from __future__ import annotations

import time
from datetime import datetime

__all__ = ["now_rfc3339", "now_rfc3339_milli", "rfc3339_micro"]

_FORMAT = "%Y-%m-%dT%H:%M:%S"
_second: tuple[int, str] = (-1, "")


def _seconds(second: int) -> str:
    """``second`` (Unix time) as ``2006-01-02T15:04:05``."""
    global _second
    cached = _second
    if cached[0] != second:
        cached = _second = (second, time.strftime(_FORMAT, time.gmtime(second)))
    return cached[1]


def now_rfc3339() -> str:
    """Now, in whole seconds (``metav1.Time``)."""
    return _seconds(int(time.time())) + "Z"


def now_rfc3339_milli() -> str:
    """Now with milliseconds, as log lines carry it."""
    now = time.time()
    second = int(now)
    return f"{_seconds(second)}.{int((now - second) * 1000):03d}Z"


def rfc3339_micro(ts: datetime) -> str:
    """``ts`` (timezone-aware) with microseconds (``metav1.MicroTime``)."""
    return f"{_seconds(int(ts.timestamp()))}.{ts.microsecond:06d}Z"
