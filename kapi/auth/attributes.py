"""What a request asks to do (kube's ``authorizer.Attributes``) and kube's
wording when it may not."""

from __future__ import annotations

from dataclasses import dataclass

from kapi import errors
from kapi.auth.user import UserInfo

__all__ = ["Attributes", "forbidden", "forbidden_message"]


@dataclass(frozen=True)
class Attributes:
    user: UserInfo | None  # None: not authenticated (only ever audited, never authorized)
    verb: str
    resource_request: bool = True
    namespace: str = ""
    api_group: str = ""
    api_version: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    path: str = ""


def forbidden_message(attrs: Attributes) -> str:
    """kube's ``forbiddenMessage`` (``pkg/endpoints/handlers/responsewriters``)."""
    user = attrs.user.username
    if not attrs.resource_request:
        return f'User "{user}" cannot {attrs.verb} path "{attrs.path}"'
    resource = attrs.resource + (f"/{attrs.subresource}" if attrs.subresource else "")
    if attrs.namespace:
        return (
            f'User "{user}" cannot {attrs.verb} resource "{resource}" in API group '
            f'"{attrs.api_group}" in the namespace "{attrs.namespace}"'
        )
    return (
        f'User "{user}" cannot {attrs.verb} resource "{resource}" in API group '
        f'"{attrs.api_group}" at the cluster scope'
    )


def forbidden(attrs: Attributes, reason: str = "") -> errors.StatusError:
    """The 403 ``Status`` kube answers for a denied request."""
    message = forbidden_message(attrs) + (f": {reason}" if reason else "")
    if not attrs.resource_request:
        return errors.StatusError(
            errors.status_failure(403, "Forbidden", f"forbidden: {message}", {})
        )
    return errors.forbidden(attrs.api_group, attrs.resource, attrs.name, message)
