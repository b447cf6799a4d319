"""Failures of validate-on-push, as refusals the pusher can read.

Whatever goes wrong while a push is validated (the database gone, a revision
git cannot read, a bug), the pusher must see one clear ``remote:`` line and
the push must be refused: never Django's HTML error page or a traceback in
their terminal, and never a push that silently skipped validation.

``refusing`` wraps the pre-receive endpoint (``sync.http.pre_receive``): an
exception becomes the JSON answer the hook (``sync.prereceive_hook``) prints,
with the status code kube would give it (503 when the database is
unavailable, 500 otherwise) and the request id to find the traceback in the
server log. ``refusal_line`` gives the same line for the fallback hook
(``manage.py sync pre-receive``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse

from kapi.observability.context import current_request_id

__all__ = ["refusal_line", "refusing"]


def refusal_line(exc: BaseException) -> tuple[int, str]:
    """(HTTP status, ``kapi: push rejected: ...`` line) for ``exc``; logs the
    traceback of anything that is not an expected failure."""
    from kapi.api.exceptions import to_status_error

    error = to_status_error(exc)
    message = str(error.status.get("message") or type(exc).__name__)
    request_id = current_request_id()
    where = f" (request id {request_id})" if request_id and error.code >= 500 else ""
    return error.code, f"kapi: push rejected: cannot validate it: {message}{where}"


def refusing(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """``view``, with any exception turned into a refusal answer (JSON)."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - the pusher gets a line, the log the traceback
            code, line = refusal_line(exc)
            return JsonResponse({"accepted": False, "message": line, "messages": [line]}, status=code)

    return wrapped
