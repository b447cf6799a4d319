"""Fixtures for watch tests: a dedicated server with short timers.

``watch_server`` (shared by the files of the ``WATCH_SERVER`` group in
tests/groups.py, which one worker runs) runs ``serve`` with bookmarks every
second, compaction every two seconds in steps of 16 changes and a 10 s history
window, so bookmarks and 410s can be seen in a test's time. ``watch_api`` is
a raw HTTP client for it; ``watch_ns`` a fresh namespace. ``db`` connects to
the server's PostgreSQL (to read the change log and compare streams against
it).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from kapi_testserver import KapiServer, serving

from tests.api.conftest import API, wait_for_root_ca
from tests.watch.helpers import ROOT_CA

WATCH_ENV = {
    "KAPI_WATCH_BOOKMARK_SECONDS": "1",
    "KAPI_COMPACTION_INTERVAL_SECONDS": "2",
    "KAPI_HISTORY_WINDOW_SECONDS": "10",
    "KAPI_COMPACTION_STEP": "16",
}


def database_url(server: KapiServer) -> str:
    from kapi.runtime.config import _embedded_postgres_url

    return _embedded_postgres_url(server.data_dir / "postgres")


@pytest.fixture(scope="session")
def watch_server() -> Iterator[KapiServer]:
    yield from serving({**os.environ, **WATCH_ENV})


@pytest.fixture(scope="session")
def watch_api(watch_server: KapiServer) -> API:
    return API(watch_server)


@pytest.fixture
def watch_ns(watch_api: API) -> Iterator[str]:
    name = f"w-{uuid.uuid4().hex[:10]}"
    r = watch_api.post("/api/v1/namespaces", {"metadata": {"name": name}})
    assert r.status_code == 201, r.text
    # The root-CA publisher adds its ConfigMap to every new namespace: let it
    # land before the test starts watching (stream_events leaves it out).
    wait_for_root_ca(watch_api, name)
    yield name
    watch_api.delete(f"/api/v1/namespaces/{name}")
    # The namespace's content is deleted by the lifecycle workers after the
    # DELETE: wait for it to be gone, so that no later all-namespaces watch sees
    # those DELETED events.
    deadline = time.monotonic() + 30
    while watch_api.get(f"/api/v1/namespaces/{name}").status_code != 404:
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)


@pytest.fixture
def db(watch_server: KapiServer) -> Iterator[psycopg.Connection]:
    with psycopg.connect(database_url(watch_server), autocommit=True) as conn:
        yield conn


def stream_events(api: API, path: str, params: dict, *, limit: int | None = None,
                  until=None, timeout: float = 30, headers: dict | None = None) -> list[dict]:
    """Open a watch and collect events until ``limit`` events, ``until(event)``
    is true, or the server ends the stream. Events of the root-CA publisher's
    ConfigMap (in every namespace) are not the tests' own: left out."""
    params = {"watch": "1", **params}
    events: list[dict] = []
    with api.session.get(api.server.url + path, params=params, stream=True,
                         timeout=timeout, headers=headers or {}) as r:
        assert r.status_code == 200, r.text
        for line in _guard(iter_lines(r), events):
            event = json.loads(line)
            if _publishers(event):
                continue
            events.append(event)
            if limit is not None and len(events) >= limit:
                break
            if until is not None and until(event):
                break
    return events


def _publishers(event: dict) -> bool:
    obj = event.get("object") or {}
    if event.get("type") == "BOOKMARK":
        return False
    if obj.get("kind") == "Table":  # as=Table: the row's object
        rows = obj.get("rows") or []
        return bool(rows) and all((r.get("object") or {}).get("metadata", {}).get("name") == ROOT_CA
                                  for r in rows)
    return (obj.get("metadata") or {}).get("name") == ROOT_CA


def _guard(lines, events):
    try:
        yield from lines
    except Exception as exc:
        raise AssertionError(f"stream failed after {len(events)} events: {events!r}") from exc


def iter_lines(response):
    """Lines as soon as their chunk arrives (``Response.iter_lines`` waits
    for 512 bytes, which would hold back the last events of a stream)."""
    buffer = b""
    for chunk in response.iter_content(chunk_size=None):
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line.strip():
                yield line
