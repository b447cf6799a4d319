"""A per-user limit on requests in flight, per API process (kube's
max-requests-inflight, kept per user so one noisy client cannot starve others).

``KAPI_MAX_INFLIGHT_PER_USER`` (default 200 per process; 0 disables). Over the
limit the request is answered 429 with ``Retry-After: 1`` and a ``Status``
(reason ``TooManyRequests``). Long-running requests (watches, proxy, and the
attach/exec/log/portforward/proxy subresources) are neither counted nor refused,
as kube's ``WithMaxInFlightLimit`` lets its long-running check through.
"""

from __future__ import annotations

import os
import threading
from collections import defaultdict

__all__ = ["DEFAULT_LIMIT", "InFlightLimiter", "is_long_running", "limiter"]

DEFAULT_LIMIT = 200

# kube-apiserver's BasicLongRunningRequestCheck(sets.NewString("watch", "proxy"),
# sets.NewString("attach", "exec", "proxy", "log", "portforward")).
_LONG_RUNNING_VERBS = frozenset({"watch", "proxy"})
_LONG_RUNNING_SUBRESOURCES = frozenset(
    {"attach", "exec", "proxy", "log", "portforward"}
)


def is_long_running(attrs) -> bool:
    """Whether kube treats the request (authorizer ``Attributes``) as long-running."""
    if not attrs.resource_request:
        return False
    return (
        attrs.verb in _LONG_RUNNING_VERBS
        or attrs.subresource in _LONG_RUNNING_SUBRESOURCES
    )


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
