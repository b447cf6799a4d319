"""A Celery worker SIGKILLed in the middle of a namespace deletion: the work stays
in the database, and a restarted worker finishes it.

Runs its own server with ``serve --no-worker`` and starts the worker itself with
the same environment ``serve`` gives its children.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import psutil
import pytest
from kapi_testserver import ROOT, serving

from tests.api.conftest import API, ROOT_CA, own
from tests.lifecycle.conftest import wait_for

OBJECTS = 500


def _worker_env(data_dir) -> dict:
    env = dict(os.environ)
    env.update(
        KAPI_DATA_DIR=str(data_dir),
        KAPI_DB_POOL="0",
        DJANGO_SETTINGS_MODULE="kapi.settings",
        PYTHONPATH=str(ROOT),
        PYTHONUNBUFFERED="1",
        # Claims of a killed worker expire quickly, so the test need not wait long.
        KAPI_CONTROLLER_LEASE_SECONDS="4",
    )
    env.pop("DATABASE_URL", None)
    env.pop("CELERY_BROKER_URL", None)
    return env


def _start_worker(data_dir, log) -> subprocess.Popen:
    from kapi.runtime.processes import celery_worker_argv

    return subprocess.Popen(
        celery_worker_argv(concurrency=2, log_level="info"),
        env=_worker_env(data_dir),
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )


def _sigkill_tree(proc: subprocess.Popen) -> None:
    parent = psutil.Process(proc.pid)
    family = [parent, *parent.children(recursive=True)]
    for p in family:
        try:
            p.send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(family, timeout=10)


@pytest.fixture
def bare_server():
    yield from serving(args=("--no-worker",))


def test_sigkilled_worker_mid_namespace_deletion(bare_server, tmp_path):
    """500 ConfigMaps; the namespace is deleted; the worker is SIGKILLed once the
    deletion is under way; a restarted worker deletes the rest and the namespace."""
    api = API(bare_server)
    ns = "lc-kill"
    assert api.post("/api/v1/namespaces", {"metadata": {"name": ns}}).status_code == 201
    base = f"/api/v1/namespaces/{ns}/configmaps"

    def create(i: int) -> int:
        return api.post(
            base, {"metadata": {"name": f"cm{i:04d}"}, "data": {"i": str(i)}}
        ).status_code

    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(create, range(OBJECTS))) == {201}

    log = open(tmp_path / "worker.log", "wb")
    second = None
    worker = _start_worker(bare_server.data_dir, log)
    try:
        assert api.delete(f"/api/v1/namespaces/{ns}").status_code == 200

        def count() -> int:
            return len(own(api.get(base).json()["items"]))

        # Watched in the database, not through a list: a list can take longer
        # than the worker needs for what is left (in CI, 0 were left once).
        with _database(bare_server.data_dir) as db:
            wait_for(
                lambda: _stored(db, ns) < OBJECTS,
                timeout=60,
                interval=0.005,
                what="deletion under way",
            )
            _sigkill_tree(worker)
        left = count()
        assert 0 < left < OBJECTS, f"{left} left when the worker was killed"
        time.sleep(1)
        assert count() == left, "nothing deletes while no worker runs"

        # Two independent workers now: they share the work through the database.
        worker = _start_worker(bare_server.data_dir, log)
        second = _start_worker(bare_server.data_dir, log)
        wait_for(
            lambda: api.get(f"/api/v1/namespaces/{ns}").status_code == 404,
            timeout=120,
            interval=0.2,
            what="namespace gone after restart",
        )
        assert count() == 0
        deletes = _deletes_per_uid(bare_server.data_dir, ns)
        assert len(deletes) == OBJECTS
        assert set(deletes.values()) == {1}, "an object was deleted twice"
    finally:
        for proc in (worker, second):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    _sigkill_tree(proc)
        log.close()


def _database(data_dir):
    """A connection to the server's embedded PostgreSQL (autocommit)."""
    import psycopg

    from kapi.runtime.config import _embedded_postgres_url

    return psycopg.connect(_embedded_postgres_url(data_dir / "postgres"), autocommit=True)


def _stored(db, namespace: str) -> int:
    """The test's ConfigMaps of ``namespace`` in the object table now (not
    the root-CA publisher's)."""
    return db.execute(
        "SELECT count(*) FROM kapi_object WHERE \"group\" = '' AND resource = 'configmaps' AND namespace = %s"
        " AND name <> %s",
        [namespace, ROOT_CA],
    ).fetchone()[0]


def _deletes_per_uid(data_dir, namespace: str) -> dict[str, int]:
    """DELETED entries of the change log per ConfigMap uid in ``namespace``
    (the test's: not the root-CA publisher's, if it got there before the
    deletion)."""
    with _database(data_dir) as conn:
        rows = conn.execute(
            "SELECT uid::text, count(*) FROM kapi_change WHERE type = 'DELETED'"
            " AND \"group\" = '' AND resource = 'configmaps' AND namespace = %s AND name <> %s GROUP BY uid",
            [namespace, ROOT_CA],
        ).fetchall()
    return dict(rows)
