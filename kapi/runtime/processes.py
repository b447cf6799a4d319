"""The command lines and environment of the processes ``serve`` starts.

* the API: uvicorn with ``--workers`` processes, each listening on its own
  ``SO_REUSEPORT`` socket (``kapi.runtime.apiserver``; uvloop, httptools, TLS unless
  ``--insecure-http``); nothing may live only in one worker's memory;
* a Celery worker (prefork pool) and Celery beat (schedule in the data dir).

All of them get the same ``KAPI_DATA_DIR``, ``DATABASE_URL``,
``CELERY_BROKER_URL`` and ``DJANGO_SETTINGS_MODULE``, so that they compute the
same settings as ``serve`` did. Celery's processes get ``KAPI_DB_POOL=0``: a
psycopg pool opened before prefork's fork would be shared by the children.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

import kapi
from kapi.runtime.certs import TLSFiles
from kapi.runtime.endpoint import Endpoint
from kapi.runtime.parent import SERVE_PID

__all__ = [
    "PROJECT_ROOT",
    "celery_beat_argv",
    "celery_worker_argv",
    "child_env",
    "uvicorn_argv",
]

PROJECT_ROOT = Path(kapi.__file__).resolve().parent.parent

# uvicorn waits this long for open requests (watches!) before closing them.
GRACEFUL_SHUTDOWN_SECONDS = 5
WORKER_HEALTHCHECK_SECONDS = 30


def child_env(
    base: Mapping[str, str],
    *,
    data_dir: Path,
    database_url: str,
    broker_url: str,
    celery: bool = False,
) -> dict[str, str]:
    """The environment for a child process."""
    env = dict(base)
    env.update(
        KAPI_DATA_DIR=str(data_dir),
        DATABASE_URL=database_url,
        CELERY_BROKER_URL=broker_url,
        DJANGO_SETTINGS_MODULE=base.get("DJANGO_SETTINGS_MODULE", "kapi.settings"),
        PYTHONUNBUFFERED="1",
        # Every process writes its metrics here; /metrics adds them up.
        PROMETHEUS_MULTIPROC_DIR=str(data_dir / "metrics"),
    )
    # The children stop if serve dies (kapi.runtime.parent).
    env[SERVE_PID] = str(os.getpid())
    # The children import kapi whatever their working directory.
    path = [str(PROJECT_ROOT)] + [
        p for p in base.get("PYTHONPATH", "").split(os.pathsep) if p
    ]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(path))
    if celery:
        env["KAPI_DB_POOL"] = "0"
    return env


def uvicorn_argv(
    endpoint: Endpoint,
    *,
    tls: TLSFiles | None,
    workers: int,
    access_log: bool = False,
    log_level: str = "warning",
) -> list[str]:
    argv = [
        sys.executable,
        "-m",
        # uvicorn's command line, one listening socket per worker (SO_REUSEPORT).
        "kapi.runtime.apiserver",
        "kapi.asgi:application",
        "--host",
        endpoint.host,
        "--port",
        str(endpoint.port),
        "--workers",
        str(workers),
        "--loop",
        "uvloop",
        "--http",
        "httptools",
        "--timeout-graceful-shutdown",
        str(GRACEFUL_SHUTDOWN_SECONDS),
        # uvicorn kills a worker that misses a 5 s ping; on a busy 2-core box a
        # worker still importing Django can miss it, and the kill resets its
        # connections. Only a truly hung worker should be replaced.
        "--timeout-worker-healthcheck",
        str(WORKER_HEALTHCHECK_SECONDS),
        "--log-level",
        log_level,
        "--access-log" if access_log else "--no-access-log",
        # The client's address is the connection's. uvicorn's default trusts
        # X-Forwarded-For from 127.0.0.1, which is every client of a loopback
        # bind: any of them could replace its address in the audit log and in
        # the admin sign-in throttle's per-address count. The header is still
        # listed in the audit's sourceIPs, before the connection's address, as
        # kube-apiserver lists it.
        "--no-proxy-headers",
    ]
    if tls is not None:
        argv += ["--ssl-keyfile", str(tls.key), "--ssl-certfile", str(tls.cert)]
    return argv


def _celery(log_level: str) -> list[str]:
    argv = [sys.executable, "-m", "celery", "-A", "kapi"]
    if log_level.lower() not in ("debug", "info"):
        argv.append("--quiet")  # no start-up banner
    return argv


def celery_worker_argv(
    *, concurrency: int = 2, log_level: str = "warning"
) -> list[str]:
    return [
        *_celery(log_level),
        "worker",
        "--pool",
        "prefork",
        "--concurrency",
        str(concurrency),
        "--hostname",
        "kapi@%h",
        # Workers do not talk to each other: no gossip or synchronising, and
        # no heartbeat events (published every 2 s for monitors such as
        # Flower; nothing in kapi reads them, and they were most of an idle
        # worker's CPU).
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
        "--loglevel",
        log_level.upper(),
    ]


def celery_beat_argv(data_dir: Path, *, log_level: str = "warning") -> list[str]:
    schedule = data_dir / "celery" / "beat-schedule"
    schedule.parent.mkdir(parents=True, exist_ok=True)
    return [
        *_celery(log_level),
        "beat",
        "--schedule",
        str(schedule),
        "--loglevel",
        log_level.upper(),
    ]
