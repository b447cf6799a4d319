"""A throwaway PostgreSQL (pgserver) for checking generated selector SQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session")
def pg_conn(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    pgserver = pytest.importorskip("pgserver")
    psycopg = pytest.importorskip("psycopg")
    server = pgserver.get_server(tmp_path_factory.mktemp("pgdata"), cleanup_mode="stop")
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        conn.execute(
            "CREATE TEMP TABLE objects "
            "(id int PRIMARY KEY, labels jsonb, data jsonb, name text, namespace text)"
        )
        yield conn
