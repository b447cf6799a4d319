"""The bearer-token authenticator chain (kube's union token authenticator).

In order: the static token file (``kapi.runtime.tokens``), ServiceAccount JWTs,
Django user JWTs. The first that recognises the token decides; None means
unauthenticated (401).
"""

from __future__ import annotations

from kapi.auth import djangousers, serviceaccounts, signing
from kapi.auth.user import UserInfo

__all__ = ["authenticate_token"]


def authenticate_token(
    token: str, audiences: list[str] | None = None
) -> UserInfo | None:
    """The user a bearer token stands for, with ``system:authenticated``; or None."""
    from kapi.runtime import tokens

    if not token:
        return None
    static = tokens.authenticate_token(token)
    if static is not None:
        return UserInfo(
            static.name, static.uid, tuple(static.groups)
        ).with_authenticated()
    # One unverified peek at the issuer picks the verifier (no decode per kind).
    issuer = signing.unverified_issuer(token)
    if issuer == serviceaccounts.ISSUER:
        from kapi.registry.store import Registry

        found = serviceaccounts.authenticate(Registry(), token, audiences)
        return found[0] if found else None
    if issuer == djangousers.ISSUER:
        return djangousers.authenticate(token)
    return None
