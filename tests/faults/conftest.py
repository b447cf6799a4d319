"""Fault tests: each gets its own ``serve`` (they kill parts of it) unless its
server comes back whole (those share one: ``FAULTS_SHARED`` in
tests/groups.py), a second
API process on the same database for watchers, and helpers to find, kill and
measure. Figures (writes lost, time to recover, events missed) are printed
with a ``FIGURE`` prefix and appended to ``$KAPI_FIGURES`` when set."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
import requests
from kapi_testserver import (
    ROOT,
    KapiServer,
    ServerFailed,
    free_port,
    new_data_dir,
    remove_data_dir,
    served_data_dir,
    server_processes,
    start_server,
    stop_in_background,
)

from tests.groups import FAULTS_SHARED, unit_of

#: A killed worker's claims run out after LEASE seconds (20 by default): the
#: tests that kill one wait that long for another to take its work over.
LEASE = "8"
FAULT_ENV = {
    "KAPI_WATCH_BOOKMARK_SECONDS": "1",
    "KAPI_REQUEST_LOG": "0",
    "KAPI_CONTROLLER_LEASE_SECONDS": LEASE,
}


def database_url(server: KapiServer) -> str:
    from kapi.runtime.config import _embedded_postgres_url

    return _embedded_postgres_url(server.data_dir / "postgres")


def figure(test: str, **values) -> None:
    line = json.dumps({"test": test, **values})
    print("FIGURE", line)
    path = os.environ.get("KAPI_FIGURES")
    if path:
        with open(path, "a") as out:
            out.write(line + "\n")


@pytest.fixture
def fault_env() -> dict[str, str]:
    """Extra environment of a test's own :func:`fault_server`: a module
    overrides this fixture to start its server with, e.g., a shorter timer."""
    return {}


@pytest.fixture
def fault_server(request: pytest.FixtureRequest, fault_env: dict[str, str]) -> Iterator[KapiServer]:
    """A fault test's server: its own (with :func:`fault_env`), or the shared
    one if the test's file is in the ``FAULTS_SHARED`` group (tests/groups.py)."""
    if unit_of(request.node.nodeid) == FAULTS_SHARED:
        assert not fault_env, "the shared fault server takes no per-test environment"
        yield request.getfixturevalue("shared_fault_server")
        return
    yield from serve_for_faults(**fault_env)


@pytest.fixture(scope="session")
def shared_fault_server() -> Iterator[KapiServer]:
    yield from serve_for_faults()


def serve_for_faults(**env: str) -> Iterator[KapiServer]:
    """A ``serve`` with the fault tests' settings (plus ``env``), killed to the
    last process and its data directory removed afterwards. With a
    ``DATABASE_URL`` the data directory starts empty (no embedded PostgreSQL
    to copy, nor to mistake for the one in use)."""
    data_dir = new_data_dir() if "DATABASE_URL" in env else served_data_dir()
    try:
        server = start_server(data_dir, env={**os.environ, **FAULT_ENV, **env})
    except ServerFailed as error:
        remove_data_dir(data_dir)
        pytest.fail(str(error), pytrace=False)
    try:
        yield server
    finally:
        if server.process.poll() is None:
            # Kills whatever the stop leaves, and fails the run if it does.
            stop_in_background(server, remove=data_dir)
        else:
            for proc in server_processes(server):
                with contextlib.suppress(psutil.Error):
                    proc.kill()
            remove_data_dir(data_dir)


class Client:
    """A minimal JSON client with a bearer token (no retries)."""

    def __init__(self, url: str, token: str, ca: Path | None) -> None:
        self.url = url
        self.session = requests.Session()
        self.session.trust_env = False
        self.session.headers["Authorization"] = f"Bearer {token}"
        self.session.verify = str(ca) if ca else False

    def request(self, method: str, path: str, **kw) -> requests.Response:
        kw.setdefault("timeout", 10)
        return self.session.request(method, self.url + path, **kw)


def client(server: KapiServer) -> Client:
    return Client(server.url, server.token, server.ca_path)


@pytest.fixture
def other_process(fault_server: KapiServer) -> Iterator[Client]:
    """Another API server process (plain HTTP) on the same database: where the
    watchers live, so that they outlast the faults injected into serve's."""
    with second_api_process(fault_server, database_url(fault_server)) as other:
        yield other


@contextlib.contextmanager
def second_api_process(server: KapiServer, db_url: str) -> Iterator[Client]:
    """A plain-HTTP uvicorn of kapi on ``server``'s data directory and ``db_url``."""
    port = free_port()
    env = {
        **os.environ,
        **FAULT_ENV,
        "KAPI_DATA_DIR": str(server.data_dir),
        "DATABASE_URL": db_url,
        "KAPI_DB_POOL_TIMEOUT": "3",
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "kapi.asgi:application", "--host", "127.0.0.1",
         "--port", str(port), "--loop", "uvloop", "--no-access-log", "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    other = Client(f"http://127.0.0.1:{port}", server.token, None)
    deadline = time.monotonic() + 60
    while True:
        try:
            if other.request("GET", "/readyz", timeout=2).status_code == 200:
                break
        except requests.ConnectionError:
            pass
        assert time.monotonic() < deadline and proc.poll() is None, "no second process"
        time.sleep(0.3)
    try:
        yield other
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _is_worker(process: psutil.Process) -> bool:
    """A live worker (a killed one stays a zombie until its supervisor reaps it)."""
    try:
        return "spawn_main" in " ".join(process.cmdline())
    except (psutil.ZombieProcess, psutil.NoSuchProcess):
        return False


def api_workers(server: KapiServer) -> list[psutil.Process]:
    """The API worker processes of ``serve`` (children of its uvicorn
    supervisor, ``kapi.runtime.apiserver``)."""
    root = psutil.Process(server.process.pid)
    for child in root.children():
        if "kapi.runtime.apiserver" in " ".join(child.cmdline()):
            return [p for p in child.children() if _is_worker(p)]
    raise AssertionError("no API server supervisor under serve")
