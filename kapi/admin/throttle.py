"""Throttling failed admin sign-ins, against password guessing.

Failed sign-ins are counted per user name (case-folded) and per client address
in PostgreSQL (``LoginFailure``), so every API process and every restart sees
the same counts. Once a user name has ``KAPI_ADMIN_LOGIN_FAILURES`` (5) failures
within ``KAPI_ADMIN_LOGIN_WINDOW_SECONDS`` (900), or an address has
``KAPI_ADMIN_LOGIN_FAILURES_PER_ADDRESS`` (20: several people may share one), further
attempts are refused without checking the password until enough failures
have aged out of the window; refused attempts are not counted. A successful
sign-in clears the failures of its user name and address.

The client address is the connection's (``REMOTE_ADDR``): ``X-Forwarded-For``
is not trusted, since anyone can send it.
"""

from __future__ import annotations

import math
import os
from datetime import timedelta

from django.db.models.functions import Now
from django.utils import timezone

from kapi.admin.models import LoginFailure

__all__ = [
    "LIMIT_PER_ADDRESS",
    "LIMIT_PER_USER",
    "WINDOW",
    "client_address",
    "record_failure",
    "reset",
    "seconds_locked",
]

LIMIT_PER_USER = int(os.environ.get("KAPI_ADMIN_LOGIN_FAILURES", "5"))
LIMIT_PER_ADDRESS = int(os.environ.get("KAPI_ADMIN_LOGIN_FAILURES_PER_ADDRESS", "20"))
WINDOW = timedelta(
    seconds=int(os.environ.get("KAPI_ADMIN_LOGIN_WINDOW_SECONDS", "900"))
)


def client_address(request) -> str:
    return request.META.get("REMOTE_ADDR", "") or "unknown"


def _keys(username: str, address: str) -> list[tuple[str, str, int]]:
    return [
        ("user", username.casefold()[:254], LIMIT_PER_USER),
        ("address", address[:254], LIMIT_PER_ADDRESS),
    ]


def seconds_locked(username: str, address: str) -> int:
    """How long sign-ins for ``username`` from ``address`` stay refused (0: allowed)."""
    now = timezone.now()
    wait = 0.0
    for scope, key, limit in _keys(username, address):
        if limit <= 0:
            continue
        # The limit-th newest failure in the window: when it ages out, the
        # count falls below the limit again.
        nth = (
            LoginFailure.objects.filter(scope=scope, key=key, at__gt=now - WINDOW)
            .order_by("-at")
            .values_list("at", flat=True)[limit - 1 : limit]
        )
        for at in nth:
            wait = max(wait, (at + WINDOW - now).total_seconds())
    return math.ceil(wait) if wait > 0 else 0


def record_failure(username: str, address: str) -> None:
    LoginFailure.objects.filter(at__lt=Now() - WINDOW).delete()
    LoginFailure.objects.bulk_create(
        [
            LoginFailure(scope=scope, key=key)
            for scope, key, _ in _keys(username, address)
        ]
    )


def reset(username: str, address: str) -> None:
    for scope, key, _ in _keys(username, address):
        LoginFailure.objects.filter(scope=scope, key=key).delete()
