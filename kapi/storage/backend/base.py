"""Django's PostgreSQL backend, failing fast while the database is unreachable.

A request touches the database several times (token, RBAC, the object, the
audit); with the database down each attempt would wait the pool's whole
timeout, so one request would take several timeouts to answer its 503. After
one failed attempt to get a connection, this process fails every new attempt
at once for ``FAIL_FAST_SECONDS`` (``django.db.OperationalError``, answered as
503 + Retry-After by the API), then tries again; the pool keeps reconnecting in
the background meanwhile, so kapi is back as soon as PostgreSQL is.
"""

from __future__ import annotations

import threading
import time

import psycopg
from django.db.backends.postgresql import base

__all__ = ["FAIL_FAST_SECONDS", "DatabaseWrapper"]

FAIL_FAST_SECONDS = 1.0

_lock = threading.Lock()
_down_until = 0.0


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params):
        global _down_until
        if time.monotonic() < _down_until:
            raise psycopg.OperationalError("the database is unavailable (failing fast)")
        try:
            return super().get_new_connection(conn_params)
        except psycopg.OperationalError:
            with _lock:
                _down_until = time.monotonic() + FAIL_FAST_SECONDS
            raise
