"""The runtime's work table, checked in process on the real PostgreSQL
(``django_in_process``), in autocommit as workers run it. Every test uses a
controller name of its own; its rows are removed at the end."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from django_in_process import django_db_modify_db_settings  # noqa: F401 - the fixture

_numbers = itertools.count()


@pytest.fixture(scope="session")
def database(django_db_modify_db_settings, django_db_blocker) -> Iterator[None]:  # noqa: F811
    """The in-process PostgreSQL's database, migrated, outside pytest-django's
    per-test transactions (leases and SKIP LOCKED are about committed rows)."""
    from django.core.management import call_command
    from django.db import connection

    with django_db_blocker.unblock():
        call_command("migrate", verbosity=0, interactive=False)
        yield
        with connection.cursor() as cur:
            cur.execute("DELETE FROM kapi_work_item WHERE controller LIKE 'test-%'")


@pytest.fixture
def controller(database) -> str:
    """A controller name no other test uses."""
    return f"test-{next(_numbers)}"
