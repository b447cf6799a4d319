"""A per-process cache of verified JWT claims, keyed by the token's SHA-256.

RS256 verification costs about 0.1-0.3 ms per request; a client sends the same
token over and over. An entry holds the claims and the ``kid`` of the key that
verified them; a hit is used only while that key is still in the data
directory (``rotate(retire=True)`` ends its tokens at once) and the claims'
``exp``/``nbf`` still hold (checked on every hit, so expiry is exact). Entries
live ``TTL_SECONDS`` at most and the cache holds ``MAX_ENTRIES``, least
recently used dropped first. Whether the token's subject still exists (a
ServiceAccount, a Django user) is not cached here: the authenticators check it.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict

__all__ = ["MAX_ENTRIES", "TTL_SECONDS", "VerifiedTokens"]

MAX_ENTRIES = 4096
TTL_SECONDS = 300.0
LEEWAY_SECONDS = 0  # PyJWT's default leeway


class VerifiedTokens:
    def __init__(
        self, max_entries: int = MAX_ENTRIES, ttl: float = TTL_SECONDS
    ) -> None:
        self.max_entries = max_entries
        self.ttl = ttl
        self._entries: OrderedDict[tuple, tuple[float, dict, str]] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def key(token: str, audiences: list[str] | None, issuer: str) -> tuple:
        digest = hashlib.sha256(token.encode()).digest()
        return (digest, tuple(audiences) if audiences is not None else None, issuer)

    def get(self, key: tuple, valid_kids: set[str]) -> dict | None:
        """The cached claims if still usable (key kept, not expired), else None."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            stored_at, claims, kid = entry
            now = time.time()
            if (
                time.monotonic() - stored_at > self.ttl
                or kid not in valid_kids
                or ("exp" in claims and now >= float(claims["exp"]) + LEEWAY_SECONDS)
                or ("nbf" in claims and now < float(claims["nbf"]) - LEEWAY_SECONDS)
            ):
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            return claims

    def put(self, key: tuple, claims: dict, kid: str) -> None:
        with self._lock:
            self._entries[key] = (time.monotonic(), claims, kid)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
