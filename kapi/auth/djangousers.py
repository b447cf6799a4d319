"""API tokens for Django users (the admin UI's accounts).

``manage.py kubeconfig --user NAME`` creates the Django user if absent and mints
a JWT naming it (signed with ``kapi.auth.signing``; issuer ``kapi``, no expiry).
The identity follows the account: the Kubernetes user name is the Django
username, the groups are its Django groups plus ``system:authenticated``,
superusers are also in ``system:masters``; an inactive or deleted account
authenticates no more.

Each process caches identities by user id. The cache is dropped whenever the
generation in ``kapi_auth_generation`` moves (every write to users, groups or
memberships bumps it, by trigger: migration 0006), looked at most every
``FRESHNESS_SECONDS``: deactivating, deleting or regrouping a user reaches
every API process within that time, as RBAC changes do.
"""

from __future__ import annotations

import threading
import time

from kapi.auth import signing
from kapi.auth.user import ALL_AUTHENTICATED, SYSTEM_MASTERS, UserInfo

__all__ = [
    "FRESHNESS_SECONDS",
    "ISSUER",
    "authenticate",
    "ensure_user",
    "identity",
    "invalidate",
    "mint_token",
]

ISSUER = "kapi"
AUDIENCE = "kapi"
FRESHNESS_SECONDS = 0.25
_MAX_ENTRIES = 10_000


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


class _Identities:
    """user id -> (generation it was read at, UserInfo or None for no such user)."""

    def __init__(self) -> None:
        self.generation = -1
        self.checked_at = float("-inf")
        self.entries: dict[str, tuple[int, UserInfo | None]] = {}
        self.lock = threading.Lock()


_identities = _Identities()


def invalidate() -> None:
    """Look at the generation again on the next request (this process wrote)."""
    _identities.checked_at = float("-inf")


def _generation() -> int:
    """The current generation, read from the database at most every FRESHNESS_SECONDS."""
    now = time.monotonic()
    if now - _identities.checked_at < FRESHNESS_SECONDS:
        return _identities.generation
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("SELECT generation FROM kapi_auth_generation WHERE id = 1")
        row = cur.fetchone()
    generation = int(row[0]) if row else 0
    with _identities.lock:
        if generation != _identities.generation:
            _identities.entries.clear()
            _identities.generation = generation
        _identities.checked_at = now
    return generation


def _load(pk: str) -> UserInfo | None:
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.filter(pk=pk, is_active=True).first()
    if user is None:
        return None
    groups = sorted(user.groups.values_list("name", flat=True))
    if user.is_superuser:
        groups.append(SYSTEM_MASTERS)
    groups.append(ALL_AUTHENTICATED)
    return UserInfo(user.username, f"django:{user.pk}", tuple(groups))


def _identity(pk: str) -> UserInfo | None:
    generation = _generation()
    entry = _identities.entries.get(pk)
    if entry is not None and entry[0] == generation:
        return entry[1]
    info = _load(pk)
    with _identities.lock:
        if len(_identities.entries) >= _MAX_ENTRIES:
            _identities.entries.clear()
        # Tagged with the generation read before loading: if a write landed
        # meanwhile, the next look at the generation drops it.
        _identities.entries[pk] = (generation, info)
    return info


def identity(user) -> UserInfo | None:
    """The Kubernetes identity of the Django user ``user`` (the admin UI's
    signed-in account), as its API tokens carry it; None when inactive."""
    return _identity(str(user.pk))


def authenticate(token: str) -> UserInfo | None:
    claims = signing.decode(token, [AUDIENCE], ISSUER)
    if claims is None or not str(claims.get("sub", "")).startswith("django:"):
        return None
    info = _identity(claims["sub"].removeprefix("django:"))
    if info is None or info.username != claims.get("kapi.io/username"):
        return None
    return info
