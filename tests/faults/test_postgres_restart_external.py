"""PostgreSQL restarted under load, with an external server: PostgreSQL 15 from
the distribution (``tests.faults.external_postgres``; the embedded one is 16),
``serve`` pointed at it with ``DATABASE_URL`` (so migrations run on 15 too).
The same promises as the embedded case (``test_postgres_restart``): 503 with
Retry-After while it is down, reconnection without restarting kapi, watchers
that resume without missing a change, no acknowledged write lost. Then a
``pg_ctl restart`` (down for as long as a fast restart takes) is survived too.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from kapi_testserver import (
    KapiServer,
)

from tests.faults.conftest import client, figure, second_api_process, serve_for_faults
from tests.faults.external_postgres import ExternalPostgres
from tests.faults.test_postgres_restart import once_reconnected, restart_under_load


@pytest.fixture
def external_postgres() -> Iterator[ExternalPostgres]:
    pg = ExternalPostgres()
    try:
        pg.start()
        yield pg
    finally:
        pg.destroy()


@pytest.fixture
def external_server(external_postgres: ExternalPostgres) -> Iterator[KapiServer]:
    yield from serve_for_faults(DATABASE_URL=external_postgres.url)


def test_external_postgres_restart_under_load(
    external_postgres: ExternalPostgres, external_server: KapiServer
) -> None:
    assert external_postgres.version() == "15"
    assert not (external_server.data_dir / "postgres").exists(), "serve used its embedded PG"
    with second_api_process(external_server, external_postgres.url) as other:
        figures = restart_under_load(
            external_server, other, stop_db=external_postgres.stop,
            start_db=external_postgres.start,
        )
        figure("postgres_restart", database="external-15", **figures)

        # pg_ctl restart: a short outage the same server rides out.
        api = client(external_server)
        ns = f"rs-{uuid.uuid4().hex[:6]}"
        made = once_reconnected(lambda: api.request("POST", "/api/v1/namespaces", json={"metadata": {"name": ns}}))
        assert made.status_code == 201, made.text
        external_postgres.restart()
        restarted = time.monotonic()
        codes = []
        while True:
            r = api.request("POST", f"/api/v1/namespaces/{ns}/configmaps",
                            json={"metadata": {"name": f"after-{len(codes)}"}}, timeout=30)
            codes.append(r.status_code)
            if r.status_code == 201:
                break
            assert r.status_code == 503 and r.headers.get("Retry-After"), (r.status_code, r.text)
            assert time.monotonic() - restarted < 30, "kapi did not reconnect after pg_ctl restart"
            time.sleep(0.2)
        # The other process reconnects on its own too (503 until it has).
        while True:
            watch = other.request("GET", f"/api/v1/namespaces/{ns}/configmaps",
                                  params={"watch": "1", "resourceVersion": "0",
                                          "timeoutSeconds": "2"}, timeout=30)
            if watch.status_code != 503:
                break
            assert watch.headers.get("Retry-After")
            assert time.monotonic() - restarted < 30, "the other process did not reconnect"
            time.sleep(0.2)
        assert watch.status_code == 200 and '"after-' in watch.text
        figure("postgres_pg_ctl_restart", database="external-15",
               recover_seconds=round(time.monotonic() - restarted, 2),
               answered_503=codes.count(503))
