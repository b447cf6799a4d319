"""Refusing, in one line, to run a command against a data directory with no kapi.

Commands other than ``serve`` (``sync reconcile``, ``kubeconfig --user``,
``rotate_signing_key``) talk to the PostgreSQL of a running ``serve``. Run
from the wrong directory, or with a mistyped ``--data-dir``, they used to loop
on the connection pool's warnings and end in a traceback; ``require_database``
checks first and says where it looked and how to point elsewhere.
"""

from __future__ import annotations

import os

import psycopg
from django.core.management.base import CommandError

from kapi.runtime import config

__all__ = ["redacted_url", "require_database"]

_HOW = "point at one with --data-dir DIR (or KAPI_DATA_DIR=DIR), or DATABASE_URL"


def require_database() -> None:
    """Raise ``CommandError`` unless the database this process would use answers."""
    url = os.environ.get("DATABASE_URL")
    where = f"DATABASE_URL ({redacted_url(url)})" if url else str(config.data_dir())
    if not url and not (config.embedded_postgres_dir() / "postmaster.pid").exists():
        raise CommandError(
            f"no kapi database at {where} (is `manage.py serve` running there?): {_HOW}"
        )
    try:
        with psycopg.connect(config.database_url(), connect_timeout=3):
            pass
    except psycopg.Error as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CommandError(f"no kapi database answers at {where} ({reason}): {_HOW}") from None


def redacted_url(url: str) -> str:
    """The URL without its password."""
    scheme, sep, rest = url.partition("://")
    if "@" in rest and ":" in rest.split("@", 1)[0]:
        user = rest.split("@", 1)[0].split(":", 1)[0]
        rest = f"{user}:***@{rest.split('@', 1)[1]}"
    return f"{scheme}{sep}{rest}"
