"""``manage.py serve`` as a user runs it: start, answer, restart, stop cleanly.

The session server (``kapi_server``) covers the happy path; the tests that
restart, kill or reconfigure a server start their own on a fresh data directory.
"""

from __future__ import annotations

import contextlib
import json
import signal
import ssl
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import psutil
import psycopg
import pytest
import yaml
from kapi_testserver import (
    ROOT,
    KapiServer,
    free_port,
    kubectl_binary,
    leftover_processes,
    server_processes,
    start_server,
    stop_server,
)

from kapi.runtime import config, embedded, endpoint


def _get(server: KapiServer, path: str, token: str | None = None) -> tuple[int, bytes]:
    context = ssl.create_default_context(cafile=str(server.ca_path))
    request = urllib.request.Request(server.url + path)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _embedded_db(data_dir: Path) -> str:
    return config._embedded_postgres_url(data_dir / "postgres")


def test_serve_is_ready_over_verified_tls(kapi_server: KapiServer) -> None:
    """serve answers over HTTPS with a certificate that verifies against its CA."""
    assert kapi_server.url.startswith("https://127.0.0.1:")
    status, _ = _get(kapi_server, "/readyz")
    assert status == 200


def test_healthz_needs_no_token(kapi_server: KapiServer) -> None:
    """/healthz is open to anonymous clients, as in kube-apiserver."""
    status, body = _get(kapi_server, "/healthz")
    assert status == 200, body
    assert body.strip() == b"ok"


def test_kubectl_version_through_kubeconfig(kapi_server: KapiServer, tmp_path) -> None:
    """kubectl reaches the server with the kubeconfig that `kubeconfig` prints."""
    printed = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "kubeconfig", "--data-dir",
         str(kapi_server.data_dir)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(printed)
    result = subprocess.run(
        [kubectl_binary(), "--kubeconfig", str(kubeconfig), "version", "-o", "json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    info = json.loads(result.stdout)
    assert info["serverVersion"]["major"], info
    # The tests' own kubeconfig (kapi_testserver) says the same.
    assert yaml.safe_load(printed) == yaml.safe_load(kapi_server.kubeconfig_path.read_text())


def test_kubeconfig_for_another_user(kapi_server: KapiServer) -> None:
    """--user NAME is a Django user with a signed API token (not a token-file line)."""

    def kubeconfig_token() -> str:
        import yaml

        out = subprocess.run(
            [
                sys.executable,
                str(ROOT / "manage.py"),
                "kubeconfig",
                "--data-dir",
                str(kapi_server.data_dir),
                "--user",
                "alice",
            ],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        ).stdout
        doc = yaml.safe_load(out)
        assert doc["users"][0]["name"] == "alice"
        assert doc["clusters"][0]["cluster"]["server"] == kapi_server.url
        return doc["users"][0]["user"]["token"]

    first = kubeconfig_token()
    assert first != kapi_server.token
    assert kubeconfig_token().count(".") == 2
    assert "alice" not in (kapi_server.data_dir / "tokens.csv").read_text()
    import jwt

    assert jwt.decode(first, options={"verify_signature": False})["kapi.io/username"] == "alice"


def _refused_serve(bind: str, data_dir: Path) -> subprocess.CompletedProcess:
    """``serve`` that is expected to stop at once (its output captured)."""
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "serve", "--bind", bind, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )


def test_second_serve_on_same_data_dir_is_refused(kapi_server: KapiServer) -> None:
    """Two servers must never share one data directory (and its databases)."""
    result = _refused_serve("127.0.0.1:1", kapi_server.data_dir)
    assert result.returncode != 0
    assert "another kapi serve" in result.stderr


def test_second_serve_on_the_same_port_is_refused(kapi_server: KapiServer, tmp_path) -> None:
    """The API workers bind with SO_REUSEPORT, which lets a socket of the same
    user join a port in use: a second server must refuse the port, not share
    the first one's connections."""
    port = urllib.parse.urlsplit(kapi_server.url).port
    result = _refused_serve(f"127.0.0.1:{port}", tmp_path / "second")
    assert result.returncode != 0
    assert f"cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "another kapi serve" in result.stderr
    assert not (tmp_path / "second" / "postgres").exists()  # refused before anything started
    # The API server's own supervisor refuses it too (a server started in between).
    from kapi.runtime.apiserver import ReusePortConfig

    config = ReusePortConfig("kapi.asgi:application", host="127.0.0.1", port=port)
    with pytest.raises(SystemExit):
        config.bind_socket()
    status, _ = _get(kapi_server, "/readyz")
    assert status == 200


def test_restart_keeps_data_ca_and_token(fresh_data_dir: Path) -> None:
    """SIGTERM stops everything; a restart on the same data dir keeps its state."""
    data_dir = fresh_data_dir
    server = start_server(data_dir)
    try:
        pids = {p.pid for p in server_processes(server)}
        postmaster = int(
            (data_dir / "postgres" / "postmaster.pid").read_text().split()[0]
        )
        assert postmaster in pids
        with psycopg.connect(_embedded_db(data_dir), autocommit=True) as conn:
            conn.execute("CREATE TABLE restart_marker (v text)")
            conn.execute("INSERT INTO restart_marker VALUES ('kept')")
        ca, token = server.ca_path.read_bytes(), server.token
    finally:
        stop_server(server)

    server = start_server(data_dir)
    try:
        assert server.ca_path.read_bytes() == ca
        assert server.token == token
        with psycopg.connect(_embedded_db(data_dir)) as conn:
            assert conn.execute("SELECT v FROM restart_marker").fetchone() == ("kept",)
        assert _get(server, "/readyz")[0] == 200
    finally:
        stop_server(server)


def _still_running(procs: list[psutil.Process], after: float) -> list[str]:
    """Those of ``procs`` still running once they have had ``after`` seconds to stop."""
    deadline = time.monotonic() + after
    while leftover_processes(procs) and time.monotonic() < deadline:
        time.sleep(0.1)
    return leftover_processes(procs)


def _kill(procs: list[psutil.Process], waiting_for: list[psutil.Process]) -> None:
    """SIGKILL whatever of ``procs`` is left, and reap ``waiting_for``."""
    for p in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            p.kill()
    psutil.wait_procs(waiting_for, timeout=10)


def test_child_death_stops_everything(served_dir: Path) -> None:
    """If a child dies on its own, serve stops the rest and exits non-zero."""
    server = start_server(served_dir)
    procs = server_processes(server)
    try:
        beat = next(
            p
            for p in procs
            if "beat" in p.cmdline() and "celery" in " ".join(p.cmdline())
        )
        beat.send_signal(signal.SIGKILL)
        code = server.process.wait(timeout=20)
    except BaseException:
        stop_server(server)
        raise
    assert code == 1, server.output()
    assert "celery-beat exited unexpectedly" in server.output()
    assert _still_running(procs, after=5) == []


def test_killed_serve_takes_its_api_server_and_celery_with_it(served_dir: Path) -> None:
    """serve killed outright (kill -9, the OOM killer) cannot stop its children;
    they stop themselves (PR_SET_PDEATHSIG), and the port is free for the next
    serve. (The embedded PostgreSQL and Redis daemons are left running.)"""
    server = start_server(served_dir)
    procs = server_processes(server)
    port = urllib.parse.urlsplit(server.url).port
    # The API server and its workers, Celery's worker, its pool and beat.
    children = [
        p for p in psutil.Process(server.process.pid).children(recursive=True)
        if p.name() not in ("postgres", "redis-server")
    ]
    daemons = [p for p in procs if p not in children]
    try:
        commands = [" ".join(p.cmdline()) for p in children]
        assert sum("spawn_main" in c for c in commands) == 2, commands  # the API workers
        assert any("kapi.runtime.apiserver" in c for c in commands), commands
        assert any("celery" in c and "beat" in c for c in commands), commands
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=10)
        assert _still_running(children, after=20) == []
        assert endpoint.address_in_use("127.0.0.1", port) is None
    finally:
        _kill(procs, waiting_for=daemons)


def test_api_workers_stop_when_their_supervisor_is_killed_with_serve(served_dir: Path) -> None:
    """serve and the API server's supervisor both killed outright (the OOM
    killer, ``kill -9`` of the group): nobody is left to stop the workers, so
    they stop themselves instead of answering on the port unsupervised."""
    server = start_server(served_dir)
    procs = server_processes(server)
    port = urllib.parse.urlsplit(server.url).port
    try:
        supervisor = next(p for p in procs if "kapi.runtime.apiserver" in " ".join(p.cmdline()))
        workers = [p for p in supervisor.children() if "spawn_main" in " ".join(p.cmdline())]
        assert len(workers) == 2
        supervisor.send_signal(signal.SIGKILL)
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=10)
        assert _still_running(workers, after=20) == []
        assert endpoint.address_in_use("127.0.0.1", port) is None
    finally:
        _kill(procs, waiting_for=procs)


@pytest.fixture
def external_postgres(fresh_data_dir: Path):
    """A PostgreSQL that is not serve's own: a second pgserver instance."""
    pgdata = fresh_data_dir.parent / "external-pg"
    pg = embedded.start_postgres(pgdata)
    try:
        yield pg
    finally:
        pg.stop()
        assert (
            psutil.pid_exists(pg.pid) is False
            or psutil.Process(pg.pid).status() == psutil.STATUS_ZOMBIE
        )


def test_external_database_url(
    fresh_data_dir: Path, external_postgres: embedded.EmbeddedPostgres
) -> None:
    """With DATABASE_URL, serve migrates and uses that database, starting none."""
    import os

    data_dir = fresh_data_dir
    env = {**os.environ, "DATABASE_URL": external_postgres.url}
    server = start_server(data_dir, env=env)
    try:
        assert not (data_dir / "postgres").exists()
        assert _get(server, "/readyz")[0] == 200
        with psycopg.connect(external_postgres.url) as conn:
            (count,) = conn.execute("SELECT count(*) FROM django_migrations").fetchone()
            bootstrapped = set(
                conn.execute(
                    "SELECT resource, name FROM kapi_object"
                    " WHERE resource IN ('namespaces', 'clusterroles')"
                )
            )
        assert count > 0
        # The post_migrate bootstrap ran too: namespaces, RBAC policy, admin.
        assert {
            ("namespaces", "default"),
            ("namespaces", "kube-system"),
            ("namespaces", "kube-public"),
            ("clusterroles", "cluster-admin"),
        } <= bootstrapped
        assert (data_dir / "admin-password").exists()
        # serve migrated this fresh database in its own process; its writes
        # left no thread behind (a pool's, the change notifier's).
        assert psutil.Process(server.process.pid).num_threads() == 1
    finally:
        stop_server(server)
    # serve must not stop a database it did not start.
    with psycopg.connect(external_postgres.url) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_database_that_never_answers_fails_after_the_connect_timeout(fresh_data_dir: Path) -> None:
    """A DATABASE_URL whose host takes the connection and never answers (a
    wedged server, a firewall that drops): serve gives up after the connect
    timeout (``KAPI_DB_CONNECT_TIMEOUT``, 10 s unless set; 2 s here) with one
    line saying why and where (the password masked), instead of waiting for
    ever."""
    import os
    import socket

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)  # the kernel completes connections; nobody reads them
        env = {
            **os.environ,
            "DATABASE_URL": f"postgresql://postgres:hunter2@127.0.0.1:{silent.getsockname()[1]}/postgres",
            "KAPI_DB_CONNECT_TIMEOUT": "2",
        }
        done = subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "serve", "--data-dir", str(fresh_data_dir),
             "--bind", f"127.0.0.1:{free_port()}"],
            env=env, capture_output=True, text=True, timeout=60, cwd=ROOT,
        )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "migrate failed at postgresql://postgres:***@127.0.0.1:" in done.stderr, done.stderr
    assert "timeout expired" in done.stderr, done.stderr
    assert "hunter2" not in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr


def test_connect_timeout_defaults_to_ten_seconds_and_the_url_may_set_it() -> None:
    from kapi.runtime.config import database_settings

    assert database_settings("postgresql://u@db.example/kapi", pool=False)["OPTIONS"]["connect_timeout"] == "10"
    url = "postgresql://u@db.example/kapi?connect_timeout=3"
    assert database_settings(url, pool=False)["OPTIONS"]["connect_timeout"] == "3"


def test_unreachable_database_fails_at_once(fresh_data_dir: Path) -> None:
    """A DATABASE_URL no server answers at: serve exits non-zero within
    seconds, with one line saying why (not a traceback)."""
    import os

    env = {
        **os.environ,
        "DATABASE_URL": f"postgresql://postgres@/postgres?host={fresh_data_dir.parent}/nowhere",
    }
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "serve", "--data-dir", str(fresh_data_dir),
         "--bind", f"127.0.0.1:{free_port()}"],
        env=env, capture_output=True, text=True, timeout=60, cwd=ROOT,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert time.monotonic() - started < 30
    assert "migrate failed" in done.stderr and "nowhere" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
