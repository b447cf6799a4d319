"""Objects that exist from the start: the system namespaces and the bootstrap
RBAC policy (``kapi.auth.bootstrappolicy``); the control plane's own objects
(``kapi.controlplane``) are asked for here and made by the workers.

Created through the registry (the one write path) after every ``migrate``;
idempotent, so every start and every process may run it.
"""

from __future__ import annotations

from kapi.errors import StatusError
from kapi.kinds.namespaces import PROTECTED_NAMESPACES
from kapi.registry.catalog import catalog
from kapi.registry.store import Registry

__all__ = ["ensure_system_namespaces"]


def ensure_system_namespaces(registry: Registry | None = None) -> None:
    registry = registry or Registry()
    rt = catalog().lookup("", "v1", "namespaces")
    for name in PROTECTED_NAMESPACES:
        try:
            registry.create(rt, "", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        except StatusError as exc:
            if exc.code != 409:
                raise


def _on_post_migrate(sender, **kwargs) -> None:
    if getattr(sender, "name", "") == "kapi":
        ensure_system_namespaces()
        from kapi.auth.bootstrappolicy import ensure_bootstrap_policy

        ensure_bootstrap_policy()
        from kapi.lifecycle.aggregation import sync_all

        sync_all()
        # The default/kubernetes Service names this start's address; the
        # workers' first sweep finds the keys due. Not on a migration back to
        # before the work table (kapi.controllers) existed.
        from django.db import connection

        from kapi.controlplane.watch import request_all

        if "kapi_work_item" in connection.introspection.table_names():
            request_all(bump=True)
