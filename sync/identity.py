"""Who a Sync acts as: a ServiceAccount of its own namespace, never the controller.

Every request the sync makes on a Sync's behalf (validate on push, dry-run,
apply, prune, the finalizer's prune, health checks) is authorized as
``system:serviceaccount:<namespace>:<spec.serviceAccountName>``, or, without
that field, as the namespace's ServiceAccount named by the server setting
``KAPI_SYNC_DEFAULT_SERVICE_ACCOUNT`` (``default``, as Flux's
``--default-service-account`` lockdown). So a Sync can never do more than
what its namespace's owner could grant a ServiceAccount there, and a
ServiceAccount without bindings can do nothing: an administrator grants the
rights (the README's one command for a single-user server).

RBAC decides, as for impersonation in kube: the ServiceAccount object need not
exist. Writes go through ``access.registry_for``, which refuses RBAC
escalation (a Role or binding granting more than the identity holds).
"""

from __future__ import annotations

from django.conf import settings

from kapi.auth import access
from kapi.auth.user import UserInfo

__all__ = ["account_name", "identity"]


def account_name(spec: dict) -> str:
    """The ServiceAccount (in the Sync's namespace) a Sync with ``spec`` acts as."""
    return spec.get("serviceAccountName") or settings.SYNC_DEFAULT_SERVICE_ACCOUNT


def identity(namespace: str, spec: dict) -> UserInfo:
    """The user a Sync of ``namespace`` with ``spec`` acts as."""
    return access.service_account(namespace, account_name(spec))
