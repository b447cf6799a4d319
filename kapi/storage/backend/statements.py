"""Storage's fixed, hot statements, run through libpq's own calls.

A psycopg cursor runs a statement through its Python machinery (the query
object, an adapter per parameter, a loader per value, its prepared-statement
cache); for the few statements every write and every watch-cache read runs,
that cost as much client CPU as the round trip itself. ``statement_rows`` sends
a :class:`Statement` with ``pgconn.send_query_prepared`` instead: prepared once
per connection under the statement's own name, prepared again if something
dropped it (a pooler's ``DISCARD ALL``), parameters and values as PostgreSQL's
text. It is a psycopg generator, so a sync connection runs it with
``conn.wait(...)`` and an async one with ``await conn.wait(...)``.
"""

from __future__ import annotations

import os
import re

import psycopg
from psycopg import errors, generators, pq

__all__ = ["GENERIC_PLANS", "PREPARE", "Statement", "statement_rows"]

#: ``KAPI_DB_PREPARE=0`` turns prepared statements off (here and in
#: ``DatabaseWrapper.prepared_cursor``), for a pooler in transaction mode that
#: cannot keep them on a connection.
PREPARE = os.environ.get("KAPI_DB_PREPARE", "1") != "0"

#: Run once on each connection that prepares these statements. They are all
#: lookups by key or by resourceVersion range whose best plan does not depend
#: on the values, so PostgreSQL's default (``auto``: a custom plan for each
#: execution until a generic one looks no dearer) only costs planning, about a
#: tenth of the database's CPU per write; and with statistics taken when a
#: table was nearly empty (just after a namespace was purged), the custom plan
#: for a lookup by key picked a bitmap scan of the namespace index (one column
#: before migration 0014): it read every object of the namespace (357 buffers,
#: against 2 to 5 through the key) for each get and update. The generic plan
#: is made once per connection, and again when autoanalyze changes the table's
#: statistics.
GENERIC_PLANS = "SET plan_cache_mode = force_generic_plan"

_OK = (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK)


class Statement:
    """A statement's text with ``%s`` placeholders numbered for libpq, and the
    name it is prepared under on each connection."""

    __slots__ = ("name", "sql")

    def __init__(self, name: str, sql: str) -> None:
        numbers = iter(range(1, sql.count("%s") + 1))
        self.name = f"kapi_{name}".encode()
        self.sql = re.sub(r"%s", lambda _: f"${next(numbers)}", sql).encode()


def _param(value) -> bytes | None:
    if value is None:
        return None
    return value.encode() if isinstance(value, str) else str(value).encode()


def statement_rows(
    conn: psycopg.Connection | psycopg.AsyncConnection,
    statement: Statement,
    params: list,
    *,
    prepare: bool | None = None,
):
    """A generator for ``conn.wait``: runs ``statement`` with ``params`` (str,
    int or None) and returns its rows, each value PostgreSQL's text (``bytes``)
    or None; raises psycopg's error for the result (a unique violation is an
    ``IntegrityError``, ...). Unprepared if ``prepare`` is False (None:
    :data:`PREPARE`)."""
    if prepare is None:
        prepare = PREPARE
    values = [_param(v) for v in params]
    pgconn = conn.pgconn
    for attempt in (1, 2):
        if not prepare:
            pgconn.send_query_params(statement.sql, values)
        else:
            prepared = getattr(conn, "_kapi_prepared", None)
            if prepared is None:
                prepared = conn._kapi_prepared = set()
            if statement.name not in prepared:
                pgconn.send_prepare(statement.name, statement.sql)
                (result,) = yield from generators.execute(pgconn)
                if result.status != pq.ExecStatus.COMMAND_OK:
                    raise errors.error_from_result(result, encoding=conn.info.encoding)
                prepared.add(statement.name)
            pgconn.send_query_prepared(statement.name, values)
        result = (yield from generators.execute(pgconn))[-1]
        if result.status in _OK:
            return [
                tuple(result.get_value(row, col) for col in range(result.nfields))
                for row in range(result.ntuples)
            ]
        error = errors.error_from_result(result, encoding=conn.info.encoding)
        if attempt == 1 and prepare and isinstance(error, errors.InvalidSqlStatementName):
            conn._kapi_prepared = set()  # e.g. DISCARD ALL by a pooler
            continue
        raise error
    raise AssertionError("unreachable")
