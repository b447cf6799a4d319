"""Shared fixtures: a real kapi server (``kapi_server``) and clients for it.

``kapi_server`` is started once per session with ``manage.py serve`` on a free
port and a temporary data directory (embedded PostgreSQL and Redis), exactly as
a user would run it. It yields a :class:`kapi_testserver.KapiServer`: ``url``,
``data_dir``, ``kubeconfig_path``, ``token``, ``ca_path`` and
``kubectl(*args, input=None, check=True)``. At the end of the session it is
stopped with SIGTERM, and the session fails if it does not exit cleanly within
30 s (``KAPI_TEST_STOP_TIMEOUT``) or leaves any process behind. Servers that
fixtures start with ``serving`` stop in the background while the next tests
run; ``servers_stopped`` waits for them at the end of the session and fails it
for any that did not stop cleanly.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from kapi_testserver import (
    TEMPLATE_ENV,
    KapiServer,
    finish_stops,
    new_data_dir,
    remove_data_dir,
    served_data_dir,
    serving,
)
from xdist.scheduler import LoadScopeScheduling

from tests.groups import GROUPS, unit_of

#: The units of work (tests/groups.py) that take longest, longest first, each
#: named by one of its files: scheduled first (``--no-loadscope-reorder`` in
#: scripts/test keeps the collection order), so that no worker starts one of
#: them while the others run out of work. From a full run's junit times.
SLOW_FILES = (
    "tests/watch/test_watch_http.py",  # the WATCH_SERVER group, ~110 s
    "tests/faults/test_worker_kill_gc.py",  # FAULTS_SHARED, ~45 s
    "tests/runtime/test_serve.py",
    "tests/auth/test_watch_revocation.py",
    "tests/sync/test_retention.py",  # SYNC_TIMERS
    "tests/fuzz/test_atheris_parsers.py",
    "tests/sync/test_remote.py",
    "tests/faults/test_postgres_restart_external.py",
    "tests/runtime/test_idle.py",
    "tests/sync/test_wait.py",
    "tests/fuzz/test_openapi_schemathesis.py",
    "tests/sync/test_git_http_limits.py",
)


def pytest_configure(config: pytest.Config) -> None:
    """In the controlling process: a directory for the run's one served-data
    template (``kapi_testserver.served_data_dir``), inherited by the workers.
    With pytest-xdist workers, a process starts making the template at once,
    while the workers start and collect (about ten seconds each), instead of
    after, when the first of them needs a server; the others wait for it on
    the template's lock as they would for a worker making it."""
    missing = [path for paths in GROUPS.values() for path in paths
               if not (Path(__file__).resolve().parent.parent / path).is_file()]
    if missing:  # a renamed file would silently leave its group
        raise pytest.UsageError(f"tests/groups.py names files that do not exist: {missing}")
    if hasattr(config, "workerinput") or os.environ.get(TEMPLATE_ENV):
        return
    root = Path(tempfile.mkdtemp(prefix="kapi-test-template-"))
    os.environ[TEMPLATE_ENV] = str(root)
    maker = None
    if config.getoption("numprocesses", None):
        with open(root / "maker.log", "wb") as log:
            maker = subprocess.Popen(
                [sys.executable, "-c", "import sys; sys.path.append('tests');"
                 " import kapi_testserver; kapi_testserver.served_template()"],
                cwd=Path(__file__).resolve().parent.parent,
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            )

    def cleanup() -> None:
        if maker is not None:
            maker.wait()  # bounded by its start and stop timeouts
        shutil.rmtree(root, ignore_errors=True)

    config.add_cleanup(cleanup)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The slowest files first (see :data:`SLOW_FILES`), the others keep their order."""
    rank = {path: i for i, path in enumerate(SLOW_FILES)}
    items.sort(key=lambda item: rank.get(item.location[0], len(rank)))


class _FileScheduling(LoadScopeScheduling):
    """pytest-xdist's scope scheduling with the units of tests/groups.py: a
    file runs whole on one worker, a group of files that share a
    session-scoped server too."""

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log) -> LoadScopeScheduling:
    """Ahead of pytest-xdist's own choice (``--dist``)."""
    return _FileScheduling(config, log)


@pytest.fixture(scope="session", autouse=True)
def servers_stopped() -> Iterator[None]:
    """Set up before every other session fixture, so torn down after them:
    waits for the servers still stopping in the background and raises for any
    that did not stop cleanly (``kapi_testserver.finish_stops``)."""
    yield
    finish_stops()


@pytest.fixture(scope="session")
def kapi_server() -> Iterator[KapiServer]:
    # Alerts may post to the tests' receivers on loopback (refused by default);
    # a killed worker's claims run out sooner (tests/sync/test_remote.py).
    yield from serving({
        **os.environ,
        "KAPI_ALERT_ALLOWED_NETWORKS": "127.0.0.0/8",
        # ...and Syncs may apply to the tests' second servers there (tests/sync/test_remote_target.py).
        "KAPI_SYNC_REMOTE_ALLOWED_NETWORKS": "127.0.0.0/8",
        "KAPI_CONTROLLER_LEASE_SECONDS": "8",
    })


@pytest.fixture
def fresh_data_dir() -> Iterator[Path]:
    """A data directory for a test that runs its own server; removed afterwards."""
    data_dir = new_data_dir()
    try:
        yield data_dir
    finally:
        remove_data_dir(data_dir)


@pytest.fixture
def served_dir() -> Iterator[Path]:
    """A copy of a data directory serve has started from before (see
    ``kapi_testserver.served_data_dir``), for tests that need their own server
    but not a first start; removed afterwards."""
    data_dir = served_data_dir()
    try:
        yield data_dir
    finally:
        remove_data_dir(data_dir)


@pytest.fixture(scope="session")
def k8s_api_client(kapi_server: KapiServer) -> Iterator[object]:
    """A ``kubernetes.client.ApiClient`` configured from the server's kubeconfig."""
    from kubernetes import config

    client = config.new_client_from_config(config_file=str(kapi_server.kubeconfig_path))
    try:
        yield client
    finally:
        client.close()
