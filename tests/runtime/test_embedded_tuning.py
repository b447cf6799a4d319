"""The embedded PostgreSQL is tuned for months of churn.

Autovacuum visits the object and change-log tables often enough that dead rows
of updates, deletions and compaction do not pile up, WAL is capped, and the
server log goes to 24 hourly files reused each day instead of one that grows.
"""

from __future__ import annotations

import psycopg

from kapi.runtime import config, embedded


def test_embedded_postgres_runs_with_the_bounding_settings(kapi_server) -> None:
    """Every setting of POSTGRES_SETTINGS is in effect on the running server
    (logging_collector included, which needs the restart of the first start)."""
    url = config._embedded_postgres_url(kapi_server.data_dir / "postgres")
    with psycopg.connect(url, autocommit=True) as db:
        for name, value in embedded.POSTGRES_SETTINGS.items():
            setting, unit = db.execute(
                "SELECT setting, coalesce(unit, '') FROM pg_settings WHERE name = %s", [name]
            ).fetchone()
            shown = db.execute(f"SHOW {name}").fetchone()[0]
            assert value in (setting, shown), (name, setting, unit, shown)
        assert db.execute("SHOW autovacuum").fetchone()[0] == "on"
    logs = list((kapi_server.data_dir / "postgres" / "pg_log").glob("postgresql-*.log"))
    assert logs and all(len(p.name) == len("postgresql-00.log") for p in logs)
