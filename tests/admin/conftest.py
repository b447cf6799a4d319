"""Django test client on a real PostgreSQL, for the admin UI tests.

Django is set up in the test process when this package is collected, with a
throwaway data directory; the environment is restored afterwards so that
servers the other suites start (``kapi_server``) see none of it. The database
is an embedded PostgreSQL (``pgserver``) started by
``django_db_modify_db_settings``, before pytest-django creates the test
database (never SQLite).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator

import pytest
from kapi_testserver import new_data_dir, remove_data_dir

_SAVED = {k: os.environ.get(k) for k in ("KAPI_DATA_DIR", "KAPI_DB_POOL", "DATABASE_URL")}
_DATA_DIR = tempfile.mkdtemp(prefix="kapi-admin-tests-")
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


@pytest.fixture(scope="session")
def django_db_modify_db_settings() -> Iterator[None]:
    from django.conf import settings

    from kapi.runtime.config import database_settings
    from kapi.runtime.embedded import start_postgres

    # Not under pytest's temporary tree (kapi_testserver.new_data_dir): the
    # unprivileged user pgserver runs PostgreSQL as must traverse every parent,
    # and any pytest session that starts makes /tmp/pytest-of-<user> 0700 again;
    # PostgreSQL then shuts down at its next check of its lock file.
    data_dir = new_data_dir()
    server = start_postgres(data_dir / "pgdata")
    os.environ["KAPI_DB_POOL"] = "0"
    try:
        settings.DATABASES["default"].update(database_settings(server.url))
    finally:
        os.environ.pop("KAPI_DB_POOL", None)
    yield
    server.stop()
    remove_data_dir(data_dir)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker) -> Iterator[None]:
    """pytest-django's test database, emptied of other sessions before it is
    dropped: the first write starts kapi's change notifier
    (``kapi.storage.notify``), whose thread keeps its own connection for the
    life of the process, and PostgreSQL refuses to drop a database in use."""
    yield
    from django.db import connection

    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@pytest.fixture
def staff(django_user_model):
    """A staff user without any kapi permission."""
    return django_user_model.objects.create_user("viewer", password="pw", is_staff=True)


@pytest.fixture
def editor(django_user_model):
    """A staff user who may edit objects (not reveal Secrets)."""
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user("editor", password="pw", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="edit_objects"))
    return user


@pytest.fixture
def superuser(django_user_model):
    return django_user_model.objects.create_superuser("root", password="pw")


@pytest.fixture
def registry():
    from kapi.registry.store import Registry

    return Registry()
