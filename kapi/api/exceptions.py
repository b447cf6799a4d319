"""The one exception handler: every error leaves as a Kubernetes ``Status``."""

from __future__ import annotations

import logging

from django.db import DatabaseError, InterfaceError, OperationalError
from django.http import Http404
from rest_framework import exceptions as drf
from rest_framework.response import Response

from kapi import errors
from kapi.errors import StatusError

__all__ = ["error_headers", "status_exception_handler", "to_status_error"]

log = logging.getLogger("kapi.api")


def to_status_error(exc: BaseException) -> StatusError:
    if isinstance(exc, StatusError):
        return exc
    if isinstance(exc, drf.NotAuthenticated) or isinstance(exc, drf.AuthenticationFailed):
        return errors.unauthorized()
    if isinstance(exc, drf.PermissionDenied):
        return StatusError(errors.status_failure(403, "Forbidden", str(exc.detail)))
    if isinstance(exc, drf.ParseError):
        return errors.bad_request(str(exc.detail))
    if isinstance(exc, drf.UnsupportedMediaType):
        return errors.unsupported_media_type(
            exc.args[0] if exc.args else "",
            ["application/json", "application/yaml", "application/vnd.kubernetes.protobuf"],
        )
    if isinstance(exc, drf.MethodNotAllowed):
        return StatusError(errors.status_failure(405, "MethodNotAllowed", str(exc.detail)))
    if isinstance(exc, drf.NotAcceptable):
        return errors.not_acceptable(["application/json", "application/yaml"])
    if isinstance(exc, drf.Throttled):
        return errors.too_many_requests(str(exc.detail), int(exc.wait or 1))
    if isinstance(exc, Http404):
        return StatusError(
            errors.status_failure(404, "NotFound", "the server could not find the requested resource")
        )
    if isinstance(exc, OperationalError | InterfaceError):
        cause = getattr(exc, "__cause__", None)
        if getattr(cause, "sqlstate", None) == "57014":
            return errors.timeout(f"request did not complete in time: {cause}")
        log.warning("database unavailable: %s", exc)
        return errors.service_unavailable("the database is unavailable, try again")
    if isinstance(exc, DatabaseError):
        log.exception("database error")
        return errors.internal_error(str(exc).splitlines()[0] if str(exc) else "database error")
    log.exception("unhandled error")
    return errors.internal_error(f"{type(exc).__name__}: {exc}")


def error_headers(error: StatusError) -> dict[str, str]:
    """The headers that go with an error's ``Status`` (``Retry-After``, and
    for a 401 the challenge)."""
    headers = dict(error.headers)
    if error.code == 401:
        headers["WWW-Authenticate"] = 'Bearer realm="kapi"'
    return headers


def status_exception_handler(exc, context) -> Response:
    error = to_status_error(exc)
    response = Response(error.status, status=error.code)
    for name, value in error_headers(error).items():
        response[name] = value
    return response
