"""API tokens for Django users (the admin UI's accounts).

``manage.py kubeconfig --user NAME`` creates the Django user if absent and mints
a JWT naming it (signed with ``kapi.auth.signing``; issuer ``kapi``, no expiry).
The identity is resolved on every request, so it follows the account: the
Kubernetes user name is the Django username, the groups are its Django groups
plus ``system:authenticated``, superusers are also in ``system:masters``; an
inactive or deleted account authenticates no more.
"""

from __future__ import annotations

from kapi.auth import signing
from kapi.auth.user import ALL_AUTHENTICATED, SYSTEM_MASTERS, UserInfo

__all__ = ["ISSUER", "authenticate", "ensure_user", "mint_token"]

ISSUER = "kapi"
AUDIENCE = "kapi"


def ensure_user(username: str):
    """The Django user ``username``, created (no rights, unusable password) if absent."""
    from django.contrib.auth import get_user_model

    User = get_user_model()
    user, created = User.objects.get_or_create(username=username)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def mint_token(user) -> str:
    return signing.encode(
        {
            "iss": ISSUER,
            "aud": [AUDIENCE],
            "sub": f"django:{user.pk}",
            "kapi.io/username": user.username,
        }
    )


def authenticate(token: str) -> UserInfo | None:
    from django.contrib.auth import get_user_model

    claims = signing.decode(token, [AUDIENCE], ISSUER)
    if claims is None or not str(claims.get("sub", "")).startswith("django:"):
        return None
    pk = claims["sub"].removeprefix("django:")
    user = get_user_model().objects.filter(pk=pk, is_active=True).first()
    if user is None or user.username != claims.get("kapi.io/username"):
        return None
    groups = sorted(user.groups.values_list("name", flat=True))
    if user.is_superuser:
        groups.append(SYSTEM_MASTERS)
    groups.append(ALL_AUTHENTICATED)
    return UserInfo(user.username, f"django:{user.pk}", tuple(groups))
