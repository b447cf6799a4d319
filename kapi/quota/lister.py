"""Which namespaces hold no ResourceQuota, as this API process knows it.

Quota admission runs for every namespaced write, and nearly every namespace
has no quota. kube-apiserver's admission plugin reads quotas from its
informer's lister, and when that has none does a live lookup whose answer it
keeps for 30 s (``plugin/pkg/admission/resourcequota/resource_access.go``).
kapi does the same on its watch cache: a namespace found empty by a count is
remembered as empty until the watch cache publishes any change of a quota
there (or loses events), and for at most ``TTL`` seconds. A count whose
namespace saw a quota change while it ran is not remembered (the token).
Like kube's, the answer can lag a quota's creation by as long as the
process's watch cache takes to read it (milliseconds); the quota controller
then counts what was admitted meanwhile.

In a process without a watch cache (a Celery worker) every write counts.
"""

from __future__ import annotations

import threading
import time

from kapi.storage import listcache

__all__ = ["EmptyNamespaces", "empty_namespaces"]

QUOTAS = ("", "resourcequotas")


class EmptyNamespaces:
    #: Seconds a namespace stays known as empty without a recount (kube's liveTTL).
    TTL = 30.0
    #: Namespaces remembered at most (the oldest are forgotten first).
    LIMIT = 10_000

    def __init__(self) -> None:
        self._empty: dict[str, float] = {}
        #: Quota changes seen per namespace, and resets: what a token compares.
        self._changes: dict[str, int] = {}
        self._resets = 0
        self._observing: bool | None = None
        self._lock = threading.Lock()

    def _observe(self, batch) -> None:
        """On the watch cache's loop: forget what a quota change contradicts."""
        if batch is None:
            self._resets += 1
            self._empty.clear()
            return
        for event in batch:
            namespace = event.namespace
            self._empty.pop(namespace, None)
            self._changes[namespace] = self._changes.get(namespace, 0) + 1

    def _ready(self) -> bool:
        if self._observing is None:
            with self._lock:
                if self._observing is None:
                    self._observing = listcache.list_cache().observe(*QUOTAS, self._observe)
        return self._observing

    def known_empty(self, namespace: str) -> bool:
        at = self._empty.get(namespace)
        if at is None:
            return False
        if time.monotonic() - at > self.TTL:
            self._empty.pop(namespace, None)
            return False
        return True

    def token(self, namespace: str) -> tuple[int, int] | None:
        """Taken before a count; None when this process cannot remember."""
        if not listcache.enabled() or not self._ready():
            return None
        return (self._resets, self._changes.get(namespace, 0))

    def remember_empty(self, namespace: str, token: tuple[int, int] | None) -> None:
        """After a count of 0 that started at ``token``."""
        if token is None or token != (self._resets, self._changes.get(namespace, 0)):
            return
        empty = self._empty
        if len(empty) >= self.LIMIT:
            for oldest in list(empty)[: self.LIMIT // 10]:
                empty.pop(oldest, None)
        empty[namespace] = time.monotonic()


_index = EmptyNamespaces()


def empty_namespaces() -> EmptyNamespaces:
    return _index
