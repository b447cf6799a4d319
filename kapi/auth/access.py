"""Acting as a user in-process: the authorizer check the git sync and the git
endpoint call, and a registry that refuses escalation for that user.

    from kapi.auth import access
    user = access.service_account("team-a", "deployer")     # or UserInfo(...)
    access.check(user, "create", rt, "team-a", "web")       # raises a 403 StatusError
    registry = access.registry_for(user)                    # RBAC escalation checks on writes
"""

from __future__ import annotations

from kapi.auth import rbac
from kapi.auth.attributes import Attributes, forbidden
from kapi.auth.escalation import admission_for
from kapi.auth.user import SYSTEM_MASTERS, UserInfo, service_account_user

__all__ = ["allowed", "check", "check_attributes", "registry_for", "service_account"]


def service_account(namespace: str, name: str) -> UserInfo:
    """The identity of ServiceAccount ``namespace/name`` (whether or not it exists)."""
    return service_account_user(namespace, name)


def allowed(attrs: Attributes) -> bool:
    """kube's authorizer chain: ``system:masters`` always, then RBAC."""
    if SYSTEM_MASTERS in attrs.user.groups:
        return True
    return rbac.authorize(attrs).allowed


def check_attributes(attrs: Attributes) -> None:
    if not allowed(attrs):
        raise forbidden(attrs)


def check(
    user: UserInfo,
    verb: str,
    rt,
    namespace: str = "",
    name: str = "",
    subresource: str = "",
) -> None:
    """Raise kube's 403 ``StatusError`` unless ``user`` may ``verb`` the resource
    type ``rt`` (a ``ResourceType``) in ``namespace`` (by ``name``)."""
    check_attributes(
        Attributes(
            user,
            verb,
            True,
            namespace if rt.namespaced else "",
            rt.group,
            rt.version,
            rt.plural,
            subresource,
            name,
        )
    )


def registry_for(user: UserInfo, storage=None):
    """A ``Registry`` whose writes of RBAC objects are checked for escalation."""
    from kapi.registry.store import Registry

    return Registry(storage, admit=admission_for(user))
