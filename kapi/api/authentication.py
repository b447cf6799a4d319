"""Bearer-token authentication (static token file; more authenticators later)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed

__all__ = ["BearerTokenAuthentication", "UserInfo"]


@dataclass(frozen=True)
class UserInfo:
    """kube's ``user.Info``: who is asking."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = field(default_factory=tuple)

    is_authenticated = True
    is_anonymous = False

    def __str__(self) -> str:
        return self.username


class BearerTokenAuthentication(BaseAuthentication):
    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        from kapi.runtime.tokens import authenticate_token

        user = authenticate_token(token.strip())
        if user is None:
            raise AuthenticationFailed("Unauthorized")
        groups = tuple(user.groups)
        if "system:authenticated" not in groups:
            # kube adds this group to every authenticated user.
            groups += ("system:authenticated",)
        return UserInfo(user.name, user.uid, groups), token

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="kapi"'
