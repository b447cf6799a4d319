"""Impersonation headers (k8s.io/apiserver ``pkg/endpoints/filters/impersonation.go``).

``Impersonate-User``, ``Impersonate-Group`` (repeatable), ``Impersonate-Uid`` and
``Impersonate-Extra-KEY`` switch the request's user, each allowed only with the
``impersonate`` verb on ``users``/``serviceaccounts``, ``groups``, ``uids`` or
``userextras/KEY``. The requester is checked, never the impersonated user.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from urllib.parse import unquote

from kapi import errors
from kapi.auth.attributes import Attributes, forbidden
from kapi.auth.user import (
    ALL_AUTHENTICATED,
    SERVICE_ACCOUNT_GROUP,
    UserInfo,
    parse_service_account,
)

__all__ = ["impersonate"]


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def impersonate(
    requester: UserInfo, meta: Mapping[str, str], allowed: Callable[[Attributes], bool]
) -> UserInfo | None:
    """The impersonated user for the request headers in ``meta`` (Django META),
    None when there are none; a ``StatusError`` when not allowed."""
    username = meta.get("HTTP_IMPERSONATE_USER")
    groups = _split(meta.get("HTTP_IMPERSONATE_GROUP"))
    uid = meta.get("HTTP_IMPERSONATE_UID")
    extra: dict[str, tuple[str, ...]] = {}
    for key, value in meta.items():
        if key.startswith("HTTP_IMPERSONATE_EXTRA_"):
            name = unquote(
                key.removeprefix("HTTP_IMPERSONATE_EXTRA_").lower().replace("_", "-")
            )
            extra[name] = tuple(_split(value))
    if username is None and not groups and uid is None and not extra:
        return None
    if not username:
        raise errors.bad_request("requested impersonation without impersonating a user")

    checks: list[Attributes] = []
    sa = parse_service_account(username)
    if sa is not None:
        checks.append(
            Attributes(
                requester,
                "impersonate",
                True,
                sa[0],
                "",
                "v1",
                "serviceaccounts",
                "",
                sa[1],
            )
        )
    else:
        checks.append(
            Attributes(
                requester, "impersonate", True, "", "", "v1", "users", "", username
            )
        )
    checks += [
        Attributes(requester, "impersonate", True, "", "", "v1", "groups", "", g)
        for g in groups
    ]
    if uid is not None:
        checks.append(
            Attributes(
                requester,
                "impersonate",
                True,
                "",
                "authentication.k8s.io",
                "v1",
                "uids",
                "",
                uid,
            )
        )
    for key, values in extra.items():
        checks += [
            Attributes(
                requester,
                "impersonate",
                True,
                "",
                "authentication.k8s.io",
                "v1",
                "userextras",
                key,
                v,
            )
            for v in values
        ]
    for attrs in checks:
        if not allowed(attrs):
            raise forbidden(attrs)

    if sa is not None:
        for g in (SERVICE_ACCOUNT_GROUP, f"{SERVICE_ACCOUNT_GROUP}:{sa[0]}"):
            if g not in groups:
                groups.append(g)
    if username != "system:anonymous" and ALL_AUTHENTICATED not in groups:
        groups.append(ALL_AUTHENTICATED)
    return UserInfo(username, uid or "", tuple(groups), extra)
