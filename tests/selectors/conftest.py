"""A throwaway PostgreSQL (pgserver) for checking generated selector SQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kapi_testserver import new_data_dir, remove_data_dir


@pytest.fixture(scope="session")
def pg_conn() -> Iterator[object]:
    pgserver = pytest.importorskip("pgserver")
    psycopg = pytest.importorskip("psycopg")
    # Outside pytest's temporary tree, as kapi_testserver.new_data_dir explains.
    data_dir = new_data_dir()
    try:
        with pgserver.get_server(data_dir, cleanup_mode="stop") as server, psycopg.connect(
            server.get_uri(), autocommit=True
        ) as conn:
            conn.execute(
                "CREATE TEMP TABLE objects "
                "(id int PRIMARY KEY, labels jsonb, data jsonb, name text, namespace text)"
            )
            yield conn
    finally:
        remove_data_dir(data_dir)
