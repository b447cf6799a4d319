"""A request thread keeps its database connection between requests
(``kapi.api.bridge``); one that PostgreSQL has closed under it costs at most a
503 per request thread, never a 500, and is then replaced from the pool."""

from __future__ import annotations

import uuid

import psycopg
from kapi_testserver import KapiServer

from tests.faults.conftest import client, database_url


def _api_backends(url: str) -> list[int]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend'"
            " AND pid <> pg_backend_pid() AND datname = current_database()"
        ).fetchall()
    return [pid for (pid,) in rows]


def _terminate(url: str, pids: list[int]) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for pid in pids:
            conn.execute("SELECT pg_terminate_backend(%s)", [pid])


def test_connections_closed_by_postgres_are_replaced(fault_server: KapiServer) -> None:
    """Every server connection terminated between requests: the requests after
    it answer 200 or 503 (the thread that found its connection dead), and
    once each thread has replaced its connection, only 200."""
    api = client(fault_server)
    ns = f"kept-{uuid.uuid4().hex[:6]}"
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
    assert api.request("POST", "/api/v1/namespaces", json=body).status_code == 201
    for i in range(20):
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}"}}
        created = api.request("POST", f"/api/v1/namespaces/{ns}/configmaps", json=cm)
        assert created.status_code == 201
    url = database_url(fault_server)
    before = _api_backends(url)
    assert before, "the API holds no connection between requests"
    _terminate(url, before)

    codes = []
    for i in range(60):
        response = api.request("GET", f"/api/v1/namespaces/{ns}/configmaps/cm-{i % 20}")
        codes.append(response.status_code)
        assert response.status_code in (200, 503), response.text
        if response.status_code == 503:
            assert response.json()["kind"] == "Status"
    assert codes[-20:] == [200] * 20, codes
