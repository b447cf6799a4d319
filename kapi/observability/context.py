"""The request id of the request or task being served in this context.

kube answers every request with an ``Audit-Id`` header; kapi does the same and
also honours (and echoes) an ``X-Request-Id`` a client or proxy sent. The id is
kept in a context variable so that log lines and the Celery tasks a request
enqueues carry it without passing it through every call.
"""

from __future__ import annotations

import re
from contextvars import ContextVar

from kapi import ids

__all__ = ["REQUEST_ID_HEADER", "current_request_id", "new_request_id", "set_request_id"]

#: The response header that carries the id (and the request header honoured).
REQUEST_ID_HEADER = "X-Request-Id"

_request_id: ContextVar[str] = ContextVar("kapi_request_id", default="")
_SAFE = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")


def new_request_id(offered: str | None = None) -> str:
    """The client's id if it is a sane token, else a fresh UUID."""
    if offered and _SAFE.match(offered):
        return offered
    return ids.uuid4()


def set_request_id(value: str) -> object:
    """Make ``value`` current; returns a token for :func:`reset_request_id`."""
    return _request_id.set(value)


def reset_request_id(token) -> None:
    _request_id.reset(token)


def current_request_id() -> str:
    return _request_id.get()
