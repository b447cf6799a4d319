"""The storage contract runs in this process against the real PostgreSQL
storage (``django_in_process``), in autocommit as the server runs it: no test
transaction wraps it, because ``resourceVersion`` horizons and compare-and-swap
are about committed writes. Every test works in resources of its own, in
GROUP or groups ending in it, removed at the end of the session."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator

import pytest
from django_in_process import django_db_modify_db_settings  # noqa: F401 - the fixture

GROUP = "contract.storage.test.kapi.dev"
_numbers = itertools.count()


@pytest.fixture(scope="session")
def storage(django_db_modify_db_settings, django_db_blocker) -> Iterator[object]:  # noqa: F811
    """The storage on the in-process PostgreSQL's database, migrated here (not
    pytest-django's per-test transactions: they would hide what commits do)."""
    from django.core.management import call_command
    from django.db import connection

    from kapi.storage import default_storage

    with django_db_blocker.unblock():
        call_command("migrate", verbosity=0, interactive=False)
        yield default_storage()
        with connection.cursor() as cur:
            for table in ("kapi_object", "kapi_change"):
                cur.execute(f'DELETE FROM {table} WHERE "group" = %s OR "group" LIKE %s', [GROUP, f"%.{GROUP}"])


@pytest.fixture
def resource(storage) -> str:
    """A resource (plural) no other test writes."""
    return f"widgets{next(_numbers)}"


def widget(name: str, namespace: str = "", **data) -> dict:
    """An object of GROUP to store (a fresh uid each time)."""
    meta = {"name": name, "uid": str(uuid.uuid4())}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": meta, **data}


def revision(obj: dict) -> int:
    """A stored object's resourceVersion as a number."""
    return int(obj["metadata"]["resourceVersion"])
