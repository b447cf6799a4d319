"""Django test client on a real PostgreSQL, for the admin UI tests
(``django_in_process``: Django in this process, an embedded PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django_in_process import django_db_modify_db_settings  # noqa: F401 - the fixture


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


def grant(username: str, verbs: list[str]) -> None:
    """A ClusterRole allowing ``verbs`` on everything, bound to ``username``:
    the admin reads as the signed-in user's Kubernetes identity, so RBAC
    decides what a page shows (``kapi.admin.access``)."""
    from kapi.registry.catalog import catalog
    from kapi.registry.store import Registry

    rbac = "rbac.authorization.k8s.io"
    name = f"admin-test-{username}"
    Registry().create(catalog().lookup(rbac, "v1", "clusterroles"), "", {
        "metadata": {"name": name},
        "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": verbs}],
    })
    Registry().create(catalog().lookup(rbac, "v1", "clusterrolebindings"), "", {
        "metadata": {"name": name},
        "roleRef": {"apiGroup": rbac, "kind": "ClusterRole", "name": name},
        "subjects": [{"apiGroup": rbac, "kind": "User", "name": username}],
    })


@pytest.fixture
def staff(django_user_model):
    """A staff user without any kapi permission whom RBAC lets read everything."""
    user = django_user_model.objects.create_user("viewer", password="pw", is_staff=True)
    grant(user.username, ["get", "list", "watch"])
    return user


@pytest.fixture
def editor(django_user_model):
    """A staff user who may edit objects (not reveal Secrets), and whom RBAC
    lets do anything."""
    from django.contrib.auth.models import Permission

    user = django_user_model.objects.create_user("editor", password="pw", is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="edit_objects"))
    grant(user.username, ["*"])
    return user


@pytest.fixture
def superuser(django_user_model):
    return django_user_model.objects.create_superuser("root", password="pw")


@pytest.fixture
def registry():
    from kapi.registry.store import Registry

    return Registry()
