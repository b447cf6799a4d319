"""Who is asking: kube's ``user.Info`` and the well-known group names."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = [
    "ALL_AUTHENTICATED",
    "ALL_UNAUTHENTICATED",
    "SERVICE_ACCOUNT_GROUP",
    "SERVICE_ACCOUNT_PREFIX",
    "SYSTEM_MASTERS",
    "UserInfo",
    "parse_service_account",
    "service_account_user",
]

ALL_AUTHENTICATED = "system:authenticated"
ALL_UNAUTHENTICATED = "system:unauthenticated"
SYSTEM_MASTERS = "system:masters"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
SERVICE_ACCOUNT_GROUP = "system:serviceaccounts"


@dataclass(frozen=True)
class UserInfo:
    """kube's ``user.Info``: name, uid, groups and extra attributes."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = field(default_factory=tuple)
    extra: Mapping[str, tuple[str, ...]] = field(
        default_factory=dict, compare=False, hash=False
    )

    is_authenticated = True
    is_anonymous = False

    def __str__(self) -> str:
        return self.username

    def with_authenticated(self) -> UserInfo:
        """This user with ``system:authenticated`` added, as kube adds it to all."""
        if ALL_AUTHENTICATED in self.groups:
            return self
        return UserInfo(
            self.username, self.uid, (*self.groups, ALL_AUTHENTICATED), self.extra
        )


def parse_service_account(username: str) -> tuple[str, str] | None:
    """(namespace, name) of a ``system:serviceaccount:NS:NAME`` user name."""
    if not username.startswith(SERVICE_ACCOUNT_PREFIX):
        return None
    namespace, sep, name = username[len(SERVICE_ACCOUNT_PREFIX) :].partition(":")
    if not sep or not namespace or not name or ":" in name:
        return None
    return namespace, name


def service_account_user(namespace: str, name: str, uid: str = "") -> UserInfo:
    """The identity kube gives the ServiceAccount ``namespace/name``."""
    return UserInfo(
        f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}",
        uid,
        (
            SERVICE_ACCOUNT_GROUP,
            f"{SERVICE_ACCOUNT_GROUP}:{namespace}",
            ALL_AUTHENTICATED,
        ),
    )
