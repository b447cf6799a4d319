"""Django in the test process, on a real (embedded) PostgreSQL.

For the suites that call kapi's Python code directly instead of through a
server: the admin UI (Django test client) and the storage contract. Django is
set up when this module is imported (by those packages' conftest), with a
throwaway data directory; the environment is restored afterwards so that
servers the other suites start (``kapi_server``) see none of it. The database
is an embedded PostgreSQL (``pgserver``) started by
``django_db_modify_db_settings``, before pytest-django creates the test
database (never SQLite). Import the fixture into the conftest that needs it.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["django_db_modify_db_settings"]

_SAVED = {k: os.environ.get(k) for k in ("KAPI_DATA_DIR", "KAPI_DB_POOL", "DATABASE_URL")}
_DATA_DIR = tempfile.mkdtemp(prefix="kapi-in-process-tests-")
atexit.register(shutil.rmtree, _DATA_DIR, True)
# WhiteNoise warns at every request when STATIC_ROOT is missing (serve collects
# static files there; these tests use the app's finders).
os.makedirs(os.path.join(_DATA_DIR, "static"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
os.environ.update(
    KAPI_DATA_DIR=_DATA_DIR,
    KAPI_DB_POOL="0",
    DATABASE_URL="postgresql://postgres:@/postgres?host=/nonexistent",
)
import django  # noqa: E402

django.setup()
for _key, _value in _SAVED.items():
    if _value is None:
        os.environ.pop(_key, None)
    else:
        os.environ[_key] = _value


#: Whether this process's PostgreSQL runs: each conftest that imports the
#: fixture gets its own definition, but Django's settings are one, so the
#: first starts the server and the others use it (and it stops last).
_running = False


@pytest.fixture(scope="session")
def django_db_modify_db_settings() -> Iterator[None]:
    global _running
    if _running:
        yield
        return
    from django.conf import settings

    from kapi.runtime.config import database_settings
    from kapi.runtime.embedded import start_postgres

    # Not under pytest's temporary directories: they are 0700 and owned by
    # root, which the unprivileged user pgserver runs PostgreSQL as cannot enter.
    parent = Path(tempfile.mkdtemp(prefix="kapi-in-process-pg-"))
    parent.chmod(0o755)
    server = start_postgres(parent / "pgdata")
    settings.DATABASES["default"].update(database_settings(server.url, pool=False))
    _running = True
    try:
        yield
    finally:
        _running = False
        server.stop()
        shutil.rmtree(parent, ignore_errors=True)
