"""Who the signed-in admin user is to Kubernetes, and what RBAC lets them do.

Every admin page reads as the signed-in account's Kubernetes identity: the
identity its API tokens carry (``kapi.auth.djangousers.identity``: the Django
username, its Django groups, ``system:masters`` for superusers), checked by
the authorizer kubectl's requests go through (``kapi.auth.access.allowed``:
``system:masters``, then RBAC). So a person limited to namespace ``team-a``
by a RoleBinding sees only ``team-a``'s objects in the admin too.

Writes still also need the admin's own permission to edit
(``kapi_admin.edit_objects``), which an operator may withhold from an account
RBAC lets write.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied

from kapi.auth import access
from kapi.auth.attributes import Attributes, forbidden_message
from kapi.auth.user import UserInfo
from kapi.registry.resource import ResourceType

__all__ = ["allowed", "identity", "readable_namespaces", "require"]


def identity(request) -> UserInfo:
    """The signed-in user's Kubernetes identity (memoized on the request)."""
    cached = getattr(request, "_kapi_identity", None)
    if cached is None:
        from kapi.auth.djangousers import identity as of_account

        cached = of_account(request.user) or UserInfo(request.user.get_username())
        request._kapi_identity = cached
    return cached


def _attributes(request, verb: str, rt: ResourceType, namespace: str, name: str,
                subresource: str) -> Attributes:
    return Attributes(
        identity(request), verb, True, namespace if rt.namespaced else "",
        rt.group, rt.version, rt.plural, subresource, name,
    )


def allowed(request, verb: str, rt: ResourceType, namespace: str = "", name: str = "",
            subresource: str = "") -> bool:
    """Whether the signed-in user may ``verb`` ``rt`` (in ``namespace``, by ``name``)."""
    return access.allowed(_attributes(request, verb, rt, namespace, name, subresource))


def require(request, verb: str, rt: ResourceType, namespace: str = "", name: str = "",
            subresource: str = "") -> None:
    """Raise ``PermissionDenied`` (403) with kube's wording unless allowed."""
    attrs = _attributes(request, verb, rt, namespace, name, subresource)
    if not access.allowed(attrs):
        raise PermissionDenied(forbidden_message(attrs))


def readable_namespaces(request, rt: ResourceType, verb: str = "list") -> list[str] | None:
    """The namespaces where the user may ``verb`` ``rt``: None for every
    namespace (allowed cluster-wide, or ``rt`` is cluster-scoped and allowed),
    else the sorted list (possibly empty)."""
    if allowed(request, verb, rt):
        return None
    if not rt.namespaced:
        return []
    from kapi.storage import default_storage

    names = sorted(k.name for k in default_storage().keys("", ["namespaces"]))
    return [ns for ns in names if allowed(request, verb, rt, ns)]
