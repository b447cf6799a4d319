"""Fixtures for the deletion lifecycle: raw HTTP, a fresh namespace, waiting."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from tests.api.conftest import API


@pytest.fixture(scope="session")
def api(kapi_server) -> API:
    return API(kapi_server)


@pytest.fixture
def namespace(api: API) -> Iterator[str]:
    name = f"lc-{uuid.uuid4().hex[:10]}"
    response = api.post("/api/v1/namespaces", {"metadata": {"name": name}})
    assert response.status_code == 201, response.text
    yield name
    api.delete(f"/api/v1/namespaces/{name}")


def wait_for(
    predicate, timeout: float = 30.0, interval: float = 0.1, what: str = "condition"
):
    """Poll ``predicate`` until it returns something truthy; return that."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def gone(api: API, path: str) -> bool:
    return api.get(path).status_code == 404


def cm(
    name: str,
    *,
    owners: list[dict] | None = None,
    finalizers: list[str] | None = None,
    labels: dict | None = None,
) -> dict:
    meta: dict = {"name": name}
    if owners:
        meta["ownerReferences"] = owners
    if finalizers:
        meta["finalizers"] = finalizers
    if labels:
        meta["labels"] = labels
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": meta,
        "data": {"k": "v"},
    }


def owner_ref(obj: dict, block: bool = False) -> dict:
    ref = {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
    }
    if block:
        ref["blockOwnerDeletion"] = True
    return ref


def lifecycle_state(server, namespace: str) -> str:
    """The runtime's view of ``namespace`` (feed cursors, work items, last changes),
    for the message of a failed wait."""
    import psycopg

    from kapi.runtime.config import _embedded_postgres_url

    lines = []
    with psycopg.connect(_embedded_postgres_url(server.data_dir / "postgres")) as conn:
        lines.append(
            "cursor: "
            f"{conn.execute('SELECT consumer, revision FROM kapi_feed_cursor').fetchall()}"
            f" {conn.execute('SELECT name, wanted FROM kapi_wake_flag').fetchall()}"
        )
        lines.append(f"horizon: {conn.execute('SELECT kapi_rv_horizon()').fetchone()}")
        for row in conn.execute(
            "SELECT controller, name, generation, attempts, due, claimed_until, now()"
            " FROM kapi_work_item"
            " WHERE namespace = %s",
            [namespace],
        ).fetchall():
            lines.append(f"work: {row}")
        for row in conn.execute(
            "SELECT resource_version, type, name FROM kapi_change WHERE namespace = %s"
            " ORDER BY resource_version",
            [namespace],
        ).fetchall():
            lines.append(f"change: {row}")
    return "\n".join(lines)


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


@pytest.fixture(autouse=True)
def _lifecycle_state_on_failure(request):
    """On failure, print what the lifecycle tables say about the test's namespace."""
    yield
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed and "namespace" in request.fixturenames:
        server = request.getfixturevalue("kapi_server")
        try:
            print(lifecycle_state(server, request.getfixturevalue("namespace")))
        except Exception as exc:  # diagnostics only
            print(f"no lifecycle state: {exc}")
