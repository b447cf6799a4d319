"""Bearer-token authentication: the ``kapi.auth.authenticator`` chain (token file,
ServiceAccount tokens, Django user tokens) as a DRF authentication class."""

from __future__ import annotations

from rest_framework.authentication import BaseAuthentication
from rest_framework.exceptions import AuthenticationFailed

from kapi.auth.authenticator import authenticate_token
from kapi.auth.user import UserInfo

__all__ = ["BearerTokenAuthentication", "UserInfo"]


class BearerTokenAuthentication(BaseAuthentication):
    def authenticate(self, request):
        header = request.META.get("HTTP_AUTHORIZATION", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        user = authenticate_token(token.strip())
        if user is None:
            raise AuthenticationFailed("Unauthorized")
        return user, token

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="kapi"'
