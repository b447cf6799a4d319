"""A per-user limit on requests in flight, per API process (kube's
max-requests-inflight, kept per user so one noisy client cannot starve others).

``KAPI_MAX_INFLIGHT_PER_USER`` (default 200 per process; 0 disables). Watches
are long-running and not counted once their stream starts, as in kube. Over
the limit the request is answered 429 with ``Retry-After: 1``.
"""

from __future__ import annotations

import os
import threading
from collections import defaultdict

__all__ = ["DEFAULT_LIMIT", "InFlightLimiter", "limiter"]

DEFAULT_LIMIT = 200


class InFlightLimiter:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._counts: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()

    def acquire(self, user: str) -> bool:
        """Count one more request of ``user``; False (not counted) when over the limit."""
        if self.limit <= 0:
            return True
        with self._lock:
            if self._counts[user] >= self.limit:
                return False
            self._counts[user] += 1
            return True

    def release(self, user: str) -> None:
        if self.limit <= 0:
            return
        with self._lock:
            left = self._counts[user] - 1
            if left <= 0:
                self._counts.pop(user, None)
            else:
                self._counts[user] = left

    def in_flight(self, user: str) -> int:
        return self._counts.get(user, 0)


_limiter: InFlightLimiter | None = None


def limiter() -> InFlightLimiter:
    global _limiter
    if _limiter is None:
        _limiter = InFlightLimiter(
            int(os.environ.get("KAPI_MAX_INFLIGHT_PER_USER", DEFAULT_LIMIT))
        )
    return _limiter
