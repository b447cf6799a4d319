"""The lifecycle's resync (``kapi.lifecycle.watch``) asks for what the objects
themselves say is left to do, through storage's summaries: checked in process
on PostgreSQL (``django_in_process``), without a server, by the work items it
requests."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from django_in_process import django_db_modify_db_settings  # noqa: F401 - the fixture


@pytest.fixture(scope="module")
def registry(django_db_modify_db_settings, django_db_blocker) -> Iterator[object]:  # noqa: F811
    from django.core.management import call_command

    from kapi.registry.store import Registry

    with django_db_blocker.unblock():
        call_command("migrate", verbosity=0, interactive=False)
        yield Registry()


def _items(uids: list[str]) -> set[tuple[str, str, str, str]]:
    """(controller, group, resource, name) of the work items for ``uids``."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(
            'SELECT controller, "group", resource, name FROM kapi_work_item WHERE key = ANY(%s)',
            [uids],
        )
        return set(cur.fetchall())


def test_resync_asks_for_namespaces_owners_and_dependents(registry) -> None:
    """A namespace without its default ServiceAccount gets a ``namespace``
    item, an object deleting with the ``orphan`` finalizer an ``owner`` item,
    and (full resync only) an object with ownerReferences an ``attempt``."""
    from kapi.lifecycle import watch
    from kapi.registry.catalog import catalog
    from kapi.registry.options import CreateOptions, DeleteOptions

    cat = catalog()
    namespaces, configmaps = cat.lookup("", "v1", "namespaces"), cat.lookup("", "v1", "configmaps")
    ns = f"resync-{uuid.uuid4().hex[:8]}"
    ns_uid = registry.create(namespaces, "", {"metadata": {"name": ns}}, CreateOptions())["metadata"]["uid"]
    owner_ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "gone", "uid": str(uuid.uuid4())}
    owned = registry.create(
        configmaps, ns, {"metadata": {"name": "owned", "ownerReferences": [owner_ref]}}, CreateOptions()
    )["metadata"]["uid"]
    orphaning = registry.create(
        configmaps, ns, {"metadata": {"name": "orphaning", "finalizers": ["orphan"]}}, CreateOptions()
    )["metadata"]["uid"]
    registry.delete(configmaps, ns, "orphaning", DeleteOptions())
    uids = [ns_uid, owned, orphaning]

    watch.resync(full=False)
    assert _items(uids) == {
        ("namespace", "", "namespaces", ns),
        ("owner", "", "configmaps", "orphaning"),
    }
    watch.resync(full=True)
    assert ("attempt", "", "configmaps", "owned") in _items(uids)
