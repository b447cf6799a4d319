"""API errors: each carries the Kubernetes ``Status`` it is rendered as.

Modelled on apimachinery ``pkg/api/errors/errors.go``; the one DRF exception
handler (``kapi.api.exceptions``) renders ``StatusError.status`` with
``StatusError.code``::

    StatusError
    ├── bad_request (400 BadRequest)         ├── not_found (404 NotFound)
    ├── unauthorized (401 Unauthorized)      ├── already_exists (409 AlreadyExists)
    ├── forbidden (403 Forbidden)            ├── conflict (409 Conflict)
    ├── method_not_allowed / _supported (405)├── gone / expired (410 Expired / Gone)
    ├── not_acceptable (406)                 ├── request_entity_too_large (413)
    ├── unsupported_media_type (415)         ├── invalid (422 Invalid, with causes)
    ├── too_many_requests (429)              ├── internal_error (500)
    └── service_unavailable (503)            └── timeout (504 Timeout)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "Cause",
    "StatusError",
    "already_exists",
    "bad_request",
    "conflict",
    "expired",
    "forbidden",
    "gone",
    "internal_error",
    "invalid",
    "method_not_allowed",
    "method_not_supported",
    "namespace_terminating",
    "not_acceptable",
    "not_found",
    "qualified_resource",
    "request_entity_too_large",
    "service_unavailable",
    "status_failure",
    "timeout",
    "too_many_requests",
    "unauthorized",
    "unsupported_media_type",
]


@dataclass(frozen=True)
class Cause:
    """One field error: ``reason`` is a CauseType (FieldValueInvalid, ...)."""

    type: str
    message: str
    field: str = ""

    def to_dict(self) -> dict[str, str]:
        out = {"reason": self.type, "message": self.message}
        if self.field:
            out["field"] = self.field
        return out


class StatusError(Exception):
    """An error with the ``Status`` object and HTTP code it is answered with."""

    def __init__(self, status: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        super().__init__(status.get("message", ""))
        self.status = status
        self.code = int(status.get("code", 500))
        self.headers = headers or {}

    @property
    def reason(self) -> str:
        return self.status.get("reason", "")


def status_failure(
    code: int, reason: str, message: str, details: dict[str, Any] | None = None
) -> dict[str, Any]:
    status: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        status["details"] = details
    return status


def qualified_resource(group: str, resource: str) -> str:
    """``configmaps`` or ``deployments.apps``, as kube names a resource in messages."""
    return f"{resource}.{group}" if group else resource


def _details(group: str, resource: str, name: str = "", **extra: Any) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    if resource:
        details["kind"] = resource
    details.update(extra)
    return details


def not_found(group: str, resource: str, name: str) -> StatusError:
    qr = qualified_resource(group, resource)
    return StatusError(
        status_failure(404, "NotFound", f'{qr} "{name}" not found', _details(group, resource, name))
    )


def already_exists(group: str, resource: str, name: str) -> StatusError:
    qr = qualified_resource(group, resource)
    return StatusError(
        status_failure(
            409, "AlreadyExists", f'{qr} "{name}" already exists', _details(group, resource, name)
        )
    )


def conflict(group: str, resource: str, name: str, why: str) -> StatusError:
    qr = qualified_resource(group, resource)
    return StatusError(
        status_failure(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on {qr} "{name}": {why}',
            _details(group, resource, name),
        )
    )


def invalid(
    group: str, kind: str, name: str, causes: list[Cause], kind_for_message: str | None = None
) -> StatusError:
    """422 Invalid: ``Kind.group "name" is invalid: field: message, ...``."""
    label = kind_for_message or (f"{kind}.{group}" if group else kind)
    parts = [f"{c.field}: {c.message}" if c.field else c.message for c in causes]
    if len(parts) == 1:
        summary = parts[0]
    else:
        summary = "[" + ", ".join(parts) + "]"
    details: dict[str, Any] = {"name": name} if name else {}
    if group:
        details["group"] = group
    details["kind"] = kind
    details["causes"] = [c.to_dict() for c in causes]
    return StatusError(
        status_failure(422, "Invalid", f'{label} "{name}" is invalid: {summary}', details)
    )


def bad_request(message: str, causes: list[Cause] | None = None) -> StatusError:
    details = {"causes": [c.to_dict() for c in causes]} if causes else None
    return StatusError(status_failure(400, "BadRequest", message, details))


def unauthorized(message: str = "Unauthorized") -> StatusError:
    return StatusError(status_failure(401, "Unauthorized", message))


def forbidden(group: str, resource: str, name: str, message: str) -> StatusError:
    qr = qualified_resource(group, resource)
    subject = f'{qr} "{name}"' if name else qr
    return StatusError(
        status_failure(
            403, "Forbidden", f"{subject} is forbidden: {message}", _details(group, resource, name)
        )
    )


def namespace_terminating(group: str, resource: str, name: str, namespace: str) -> StatusError:
    """403 for a create in a namespace being deleted (kube's NamespaceLifecycle)."""
    error = forbidden(
        group,
        resource,
        name,
        f"unable to create new content in namespace {namespace} because it is being terminated",
    )
    error.status.setdefault("details", {})["causes"] = [
        {
            "reason": "NamespaceTerminating",
            "message": f"namespace {namespace} is being terminated",
            "field": "metadata.namespace",
        }
    ]
    return error


def method_not_supported(group: str, resource: str, action: str) -> StatusError:
    qr = qualified_resource(group, resource)
    return StatusError(
        status_failure(
            405,
            "MethodNotAllowed",
            f"{action} is not supported on resources of kind {qr!r}".replace("'", '"'),
            _details(group, resource),
        )
    )


def method_not_allowed() -> StatusError:
    """kube's answer to a method no route serves at that URL (PUT or PATCH on a
    collection, POST on an object): go-restful's 405 as
    ``NewGenericServerResponse`` words it, with empty details."""
    status = status_failure(
        405, "MethodNotAllowed", "the server does not allow this method on the requested resource"
    )
    status["details"] = {}
    return StatusError(status)


def not_acceptable(accepted: list[str]) -> StatusError:
    return StatusError(
        status_failure(
            406,
            "NotAcceptable",
            "only the following media types are accepted: " + ", ".join(accepted),
        )
    )


def unsupported_media_type(content_type: str, supported: list[str] | None = None) -> StatusError:
    message = f'the body of the request was in an unknown format - accepted media types include: {", ".join(supported or [])}'
    if not supported:
        message = f"unsupported media type {content_type!r}"
    return StatusError(status_failure(415, "UnsupportedMediaType", message))


def request_entity_too_large(message: str) -> StatusError:
    return StatusError(status_failure(413, "RequestEntityTooLarge", message))


def gone(message: str) -> StatusError:
    return StatusError(status_failure(410, "Gone", message))


def expired(message: str) -> StatusError:
    return StatusError(status_failure(410, "Expired", message))


def too_many_requests(message: str, retry_after: int = 1) -> StatusError:
    return StatusError(
        status_failure(429, "TooManyRequests", message, {"retryAfterSeconds": retry_after}),
        headers={"Retry-After": str(retry_after)},
    )


def internal_error(message: str) -> StatusError:
    return StatusError(
        status_failure(
            500,
            "InternalError",
            f"Internal error occurred: {message}",
            {"causes": [{"message": message}]},
        )
    )


def service_unavailable(message: str, retry_after: int = 1) -> StatusError:
    return StatusError(
        status_failure(503, "ServiceUnavailable", message, {"retryAfterSeconds": retry_after}),
        headers={"Retry-After": str(retry_after)},
    )


def timeout(message: str, retry_after: int = 1) -> StatusError:
    return StatusError(
        status_failure(504, "Timeout", message, {"retryAfterSeconds": retry_after}),
        headers={"Retry-After": str(retry_after)},
    )
