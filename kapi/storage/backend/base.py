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
from django.db.backends.postgresql.psycopg_any import register_tzloader
from django.utils.asyncio import async_unsafe
from psycopg.pq import Format

from kapi.storage.backend.statements import (
    GENERIC_PLANS,
    PREPARE,
    Statement,
    statement_rows,
)

__all__ = ["FAIL_FAST_SECONDS", "DatabaseWrapper"]

FAIL_FAST_SECONDS = 1.0

_NEVER = 2**31
_lock = threading.Lock()


class _PreparingCursor(psycopg.Cursor):
    """Server-side binding, every statement prepared at its first run."""

    def execute(self, query, params=None, *, prepare=None, binary=None):
        return super().execute(query, params, prepare=True if prepare is None else prepare, binary=binary)
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

    def _configure_connection(self, connection) -> bool:
        """Django's set-up of a new connection (pooled or not), and generic
        plans for the statements storage prepares on it (``GENERIC_PLANS``).
        True: the caller commits (a connection outside the pool may not be in
        autocommit yet)."""
        commit = super()._configure_connection(connection)
        if PREPARE:
            connection.execute(GENERIC_PLANS)
            commit = True
        return commit

    @async_unsafe
    def prepared_cursor(self):
        """A cursor for storage's fixed, hot statements (create, get, update,
        delete): prepared statements, so that PostgreSQL parses and plans each
        once per connection instead of on every call (for the create
        statement, about half of the database's work). Otherwise like
        ``cursor()``: Django's error wrapping, and query logging when it is on.
        Only for a few fixed statement texts: psycopg keeps at most
        ``prepared_max`` (100) per connection."""
        if not PREPARE:
            return self.cursor()
        self.close_if_health_check_failed()
        self.ensure_connection()
        with self.wrap_database_errors:
            if self.connection.prepare_threshold is None:
                # Django turns preparing off (None); no cursor but this one
                # prepares anything (client-side binding never does), and this
                # one asks for it explicitly, so the threshold is never reached.
                self.connection.prepare_threshold = _NEVER
            cursor = _PreparingCursor(self.connection)
            # As Django's create_cursor: timestamps in the connection's zone.
            tzloader = self.connection.adapters.get_loader(base.TIMESTAMPTZ_OID, Format.TEXT)
            if self.timezone != tzloader.timezone:
                register_tzloader(self.timezone, cursor)
            return self._prepare_cursor(cursor)

    @async_unsafe
    def run_statement(self, statement: Statement, params: list) -> list[tuple]:
        """Run ``statement`` with ``params`` (str, int or None) and return its
        rows, every value as PostgreSQL's text (``bytes``) or None.

        The same work as ``prepared_cursor().execute()``, through libpq
        directly: a psycopg cursor adapts each parameter and loads each value
        through its Python machinery, which cost as much client CPU as the
        round trip itself (a create: 130 us against 70 us per statement). Errors
        are psycopg's (an ``IntegrityError`` on a unique key, ...) wrapped as
        Django's, so callers and the connection's health tracking see what a
        cursor would have raised. Prepared once per connection under the
        statement's name (re-prepared if something dropped it); with
        ``KAPI_DB_PREPARE=0`` sent unprepared every time."""
        self.close_if_health_check_failed()
        self.ensure_connection()
        started = time.monotonic() if self.queries_logged else 0.0
        with self.wrap_database_errors:
            conn = self.connection
            with conn.lock:
                rows = conn.wait(statement_rows(conn, statement, params, prepare=PREPARE))
        if self.queries_logged:
            self.queries_log.append(
                {"sql": f"{statement.sql.decode()} -- {params!r}", "time": f"{time.monotonic() - started:.3f}"}
            )
        return rows
