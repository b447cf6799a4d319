"""Registry tests run in this process. Django is configured by
``django_in_process`` (a throwaway data directory; the database only when a
test asks for ``registry``: an embedded PostgreSQL, migrated here), so the
folder also runs on its own. The registry's contract runs in autocommit as the
server runs it: no test transaction hides what commits do."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from django_in_process import django_db_modify_db_settings  # noqa: F401 - the fixture

_numbers = itertools.count()


@pytest.fixture(scope="session")
def registry(django_db_modify_db_settings, django_db_blocker) -> Iterator[object]:  # noqa: F811
    """The generic registry over the real PostgreSQL storage."""
    from django.core.management import call_command

    from kapi.registry.store import Registry

    with django_db_blocker.unblock():
        call_command("migrate", verbosity=0, interactive=False)
        yield Registry()


@pytest.fixture
def namespace(registry) -> str:
    """An Active namespace no other test writes in."""
    from kapi.registry.catalog import catalog

    name = f"registry-contract-{next(_numbers)}"
    registry.create(catalog().lookup("", "v1", "namespaces"), "", {"metadata": {"name": name}})
    return name
