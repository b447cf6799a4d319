"""A resource request's cycle, without DRF's general-purpose machinery.

``ResourceView`` serves nearly every API request, and DRF's
``APIView.dispatch`` cost a create more than the request's own decoding and
encoding: per request it built a ``Request`` proxy (every attribute read going
through ``__getattr__``), a fresh instance of every parser, renderer,
authenticator, permission and throttle class, an ``Allow`` header listing the
view's methods, and a ``Response``, a template response that Django rendered
afterwards. :func:`serve` runs the same steps, in the same order, with the
same kapi parts, built once per process:

1. negotiate the output (``kapi.api.negotiation``); a 406 waits until the
   user is known, so a stranger gets 401, not 406;
2. authenticate (``BearerTokenAuthentication``), then ``KubernetesAccess``:
   401, impersonation, the in-flight limit, RBAC;
3. the view's handler, given an :class:`APIRequest`, whose body is decoded on
   first use by the parser for its ``Content-Type``;
4. an exception becomes kube's ``Status`` (``kapi.api.exceptions``);
5. the answer is encoded by the negotiated renderer; then the audit event and
   the in-flight release (``kapi.api.filters.finish``) see the final code.

Methods other than GET, HEAD, POST, PUT, PATCH and DELETE (OPTIONS, TRACE)
keep DRF's own dispatch.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from functools import cache

from django.http import HttpResponse
from rest_framework.exceptions import UnsupportedMediaType
from rest_framework.settings import api_settings

from kapi import errors
from kapi.api import filters
from kapi.api.exceptions import error_headers, to_status_error
from kapi.api.negotiation import KubernetesContentNegotiation, negotiate_output
from kapi.api.renderers import JSONRenderer

__all__ = ["METHODS", "APIRequest", "Answer", "serve"]

#: The methods :func:`serve` answers (Django's names).
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"})

_negotiator = KubernetesContentNegotiation()
_JSON = JSONRenderer()
#: ``APIRequest._data`` until the body is decoded.
_UNREAD = object()


@dataclass(slots=True)
class Answer:
    """A handler's answer before encoding: the document, its code, extra headers."""

    data: object
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@cache
def _instances(classes: tuple) -> tuple:
    """One instance of each class (parsers, renderers, authenticators,
    permissions: none keeps state between requests), made once per process."""
    return tuple(cls() for cls in classes)


class APIRequest:
    """What a handler reads of a request, as DRF's ``Request`` offers it:
    ``data`` (the decoded body), ``user`` and ``auth`` (once authenticated),
    ``kapi_output`` and the renderer negotiated; anything else is Django's
    request's own (``META``, ``GET``, ``path``, ...)."""

    def __init__(self, request) -> None:
        self._request = request
        self.META = request.META
        self.method = request.method
        self.path = request.path
        self.user = None
        self.auth = None
        self.kapi_output = None
        self.accepted_renderer = None
        self.accepted_media_type = None
        self._data = _UNREAD

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "_request":
            raise AttributeError(name)
        return getattr(self._request, name)

    @property
    def GET(self):  # noqa: N802 - Django's name
        return self._request.GET

    query_params = GET

    @property
    def content_type(self) -> str:
        meta = self.META
        return meta.get("CONTENT_TYPE", meta.get("HTTP_CONTENT_TYPE", ""))

    @property
    def data(self):
        """The body decoded by the parser for its ``Content-Type`` (none:
        JSON), as DRF decodes it: no body (``Content-Length`` 0 or absent) is
        ``{}``, an unknown type is 415, a parser's error is raised once and
        leaves ``{}`` behind."""
        if self._data is _UNREAD:
            self._data = {}
            self._data = self._parse()
        return self._data

    def _parse(self):
        meta = self.META
        try:
            length = int(meta.get("CONTENT_LENGTH", meta.get("HTTP_CONTENT_LENGTH", 0)))
        except (ValueError, TypeError):
            length = 0
        if length == 0:
            return {}
        parser = _negotiator.select_parser(self, _instances(tuple(api_settings.DEFAULT_PARSER_CLASSES)))
        if parser is None:
            raise UnsupportedMediaType(self.content_type)
        raw = self._request
        stream = raw if not raw._read_started else io.BytesIO(raw.body)
        return parser.parse(stream, self.content_type, None)


def _authenticate(view, request: APIRequest) -> None:
    """DRF's ``Request._authenticate``: the first authenticator that knows the
    credentials names the user; one that refuses them raises (401)."""
    for authenticator in _instances(tuple(view.authentication_classes)):
        found = authenticator.authenticate(request)
        if found is not None:
            request.user, request.auth = found
            return


def _handle(view, request: APIRequest, args, kwargs):
    try:
        filters.start(request)
        try:
            request.kapi_output = negotiate_output(
                request.META.get("HTTP_ACCEPT"), view.transforms, view.protobuf
            )
            refused = None
        except errors.StatusError as exc:
            refused = exc
        request.accepted_renderer, request.accepted_media_type = _negotiator.select_renderer(
            request, _instances(tuple(view.renderer_classes))
        )
        _authenticate(view, request)
        for permission in _instances(tuple(view.permission_classes)):
            permission.has_permission(request, view)
        if refused is not None:
            raise refused
        handler = view.get if request.method == "HEAD" else getattr(view, request.method.lower())
        return handler(request, *args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - every error leaves as a Status
        error = to_status_error(exc)
        return Answer(error.status, error.code, error_headers(error))


def _content_type(request: APIRequest, code: int) -> str:
    output = request.kapi_output
    return request.accepted_media_type if output is None else output.content_type_for(code)


def _render(request: APIRequest, answer: Answer) -> HttpResponse:
    response = HttpResponse(status=answer.status)
    response.data = answer.data  # for the audit event (kapi.api.filters.finish)
    content = request.accepted_renderer.render(
        answer.data, request.accepted_media_type, {"request": request, "response": response}
    )
    response.content = content
    if content:
        response["Content-Type"] = _content_type(request, answer.status)
    else:
        del response["Content-Type"]
    for name, value in answer.headers.items():
        response[name] = value
    return response


def _respond(request: APIRequest, result) -> HttpResponse:
    """The handler's answer encoded; a failure to encode it is a ``Status``
    (as JSON), so that :func:`serve` always gets to release what the request
    holds."""
    if not isinstance(result, Answer):
        return result  # a response already (a watch's stream)
    try:
        return _render(request, result)
    except Exception as exc:  # noqa: BLE001 - every error leaves as a Status
        error = to_status_error(exc)
        request.kapi_output = None
        request.accepted_renderer, request.accepted_media_type = _JSON, "application/json"
        return _render(request, Answer(error.status, error.code, error_headers(error)))


def serve(view, request, args: tuple = (), kwargs: dict | None = None):
    """The response to ``request`` (Django's) from a resource ``view``."""
    api_request = APIRequest(request)
    response = _respond(api_request, _handle(view, api_request, args, kwargs or {}))
    response = view.finish_response(api_request, response)
    filters.finish(api_request, response, view.resource_view)
    return response
