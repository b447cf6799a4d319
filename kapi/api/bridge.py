"""One thread hop per API request: Django's synchronous stack driven from ASGI.

a2wsgi runs a WSGI app in a thread and crosses back to the event loop for
every piece of I/O: one ``run_coroutine_threadsafe`` to receive the body, one
for ``start_response``, one per body chunk, each with its futures, queues and
loop wake-ups. Profiled under ``kbench create`` that machinery took more of
the GIL than Django, DRF and the handlers together. An API request needs none
of it: its body is at most 3 MiB (``kapi.api.parsers.MAX_BODY_BYTES``) and
its response is one ``HttpResponse`` (watches, the only streams, go through
``kapi.api.streaming``). So :class:`APIBridge` reads the body on the loop,
hands Django's request (``ASGIRequest``, as Django's own ASGI handler builds
it) to a request thread (``kapi.api.threads``) that runs the synchronous
middleware chain once, and sends status, headers and bytes from the loop: one
hop there and one back.

The bridge serves only API paths (``kapi.asgi`` sends the admin UI, git and
hooks through Django's full handler), so it runs a lean request cycle inside
Django's handler, measured at about a tenth of a create's request-thread CPU:

- its middleware chain is ``MIDDLEWARE`` without Django's browser middlewares
  (``kapi.api.browser_only``), which step over API paths anyway: the same
  request id, metrics, access log, body limit and error ``Status``;
- it sends no request signals. Their receivers are Django's own
  (:data:`SIGNAL_RECEIVERS`: ``reset_queries``, ``close_old_connections``,
  ``close_caches``, ``reset_urlconf``), and the bridge does their work
  itself, except that a request thread keeps its pooled database connection
  across requests instead of checking one out and back in per request: see
  :func:`_keep_or_release`. (So an API process holds up to one connection per
  request thread while its threads live, within the pool's ``max_size``.)
  A receiver connected by anything else (by the time the bridge is built,
  after ``django.setup()``) makes the bridge send the signals as Django does
  (``_lean_signals``);
- resource URLs (``/api/V/...``, ``/apis/G/V/...``: nearly every request) skip
  Django's resolver (about 20 us a request): the first patterns of
  ``kapi.api.urls`` match them, with no arguments, so Django resolves every
  such path to the same match; :meth:`APIBridge.resolve_request` asks those
  patterns themselves and reuses the match Django gave the first time;
- what Django's handler does around the view that an API request cannot
  need is skipped where it is provably a no-op (:meth:`APIBridge.get_response`,
  :meth:`APIBridge._get_response`): the thread's URLconf is set to the
  default and reset per request (nothing here sets another one; a request
  whose ``urlconf`` a middleware sets still gets Django's handling), view
  and template-response middleware and ``ATOMIC_REQUESTS`` that none is
  configured for, and the close of caches whose backends close nothing
  (Django's default local-memory cache). Each is a thread-local access or a
  loop per request: together about a twentieth of a create's request thread,
  measured in context (``bench/inproc_writes.py``).
"""

from __future__ import annotations

import asyncio
import io
import os
import threading
import time
import weakref

from django.conf import settings
from django.core import signals
from django.core.cache import BaseCache, close_caches
from django.core.exceptions import ImproperlyConfigured, MiddlewareNotUsed
from django.core.handlers import base
from django.core.handlers.asgi import ASGIRequest
from django.core.handlers.exception import convert_exception_to_response
from django.db import close_old_connections, connections, reset_queries
from django.http import HttpResponse
from django.urls import set_urlconf
from django.utils.module_loading import import_string

from kapi import errors
from kapi.api.middleware import status_response
from kapi.api.parsers import MAX_BODY_BYTES
from kapi.api.threads import RequestThreads
from kapi.runtime import heap
from kapi.storage import listcache

__all__ = [
    "KEEP_CONNECTION_SECONDS",
    "SIGNAL_RECEIVERS",
    "APIBridge",
    "api_middleware",
    "request_threads",
    "request_threads_max",
]

#: The receivers of ``request_started`` / ``request_finished`` whose work the
#: bridge does itself (Django connects them on import).
SIGNAL_RECEIVERS = {
    "request_started": {reset_queries, close_old_connections},
    "request_finished": {close_old_connections, close_caches, base.reset_urlconf},
}

#: How long a request thread keeps one pooled connection before handing it
#: back to the pool (which then applies its own lifetime and health rules).
KEEP_CONNECTION_SECONDS = 60.0

#: A response body above this many bytes is sent in slices of it, each once
#: the connection has taken the ones before (uvicorn waits for the
#: transport to drain below its high-water mark). Sent whole, the TLS layer
#: encrypted all of it at once into the socket's buffer: a list of every
#: ConfigMap of a 500,000-object store (720 MB) held its ciphertext beside
#: the body, and the process peaked at 2.8 GB.
SEND_SLICE = 1 << 20

_BROWSER_ONLY = "kapi.api.browser_only."


def request_threads() -> int:
    """Threads per API process running requests while they flow
    (``KAPI_REQUEST_THREADS``; see ``kapi.api.threads``)."""
    return max(1, int(os.environ.get("KAPI_REQUEST_THREADS", "4")))


def request_threads_max() -> int:
    """The most request threads an API process starts while requests are stuck
    (``KAPI_REQUEST_THREADS_MAX``); also the threads of the admin UI and git."""
    return max(request_threads(), int(os.environ.get("KAPI_REQUEST_THREADS_MAX", "16")))


class _Disconnected(Exception):
    """The client went away before its body was read."""


async def _read_body(receive) -> bytes:
    """The request body, cut at one byte over the limit (the parser or the
    middleware answers 413 for it; reading the rest would only waste time)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        chunk = message.get("body", b"")
        if chunk:
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                break
        if not message.get("more_body", False):
            break
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _with_length(scope: dict, body: bytes) -> dict:
    """``scope`` of a request whose body came without ``Content-Length``
    (``Transfer-Encoding: chunked``), given the length of the body read:
    Django reads a request's body only as far as that header says, and a
    chunked create or patch was read as empty (kube-apiserver reads it
    whole). One over the limit stays over it, and gets its 413."""
    headers = scope["headers"]
    for name, _ in headers:
        if name == b"content-length":
            return scope
    return {**scope, "headers": [*headers, (b"content-length", b"%d" % len(body))]}


def _headers(response: HttpResponse) -> list[tuple[bytes, bytes]]:
    headers = []
    for header, value in response.items():
        headers.append(
            (
                header.encode("ascii") if isinstance(header, str) else bytes(header),
                value.encode("latin1") if isinstance(value, str) else bytes(value),
            )
        )
    for cookie in response.cookies.values():
        headers.append((b"Set-Cookie", cookie.output(header="").encode("ascii").strip()))
    return headers


def api_middleware() -> list[str]:
    """``MIDDLEWARE`` as an API request runs it: without the browser middlewares."""
    return [path for path in settings.MIDDLEWARE if not path.startswith(_BROWSER_ONLY)]


def _receivers(signal) -> set:
    return {
        ref() if isinstance(ref, weakref.ReferenceType) else ref
        for _, ref, *_ in signal.receivers
    }


def _lean_signals() -> bool:
    """Whether only Django's own receivers listen to the request signals."""
    return (
        _receivers(signals.request_started) <= SIGNAL_RECEIVERS["request_started"]
        and _receivers(signals.request_finished) <= SIGNAL_RECEIVERS["request_finished"]
    )


def _resource_patterns() -> tuple:
    """The leading patterns of the API's URLs that serve resources, if the
    API's URLs come first at the root (else none: resolve as Django does)."""
    from django.urls import URLPattern, URLResolver, get_resolver

    from kapi.api import urls
    from kapi.api.views import ResourceView

    root = get_resolver().url_patterns
    if not (root and isinstance(root[0], URLResolver) and root[0].urlconf_module is urls
            and str(root[0].pattern) == ""):
        return ()
    out = []
    for pattern in urls.urlpatterns:
        if not (isinstance(pattern, URLPattern)
                and getattr(pattern.callback, "view_class", None) is ResourceView):
            break
        out.append(pattern)
    return tuple(out)


def _caches_to_close() -> bool:
    """Whether any configured cache backend does something when closed
    (Django's local-memory and dummy caches do not: ``BaseCache.close``)."""
    for config in settings.CACHES.values():
        try:
            backend = import_string(config["BACKEND"])
        except ImportError:
            return True
        if getattr(backend, "close", None) is not BaseCache.close:
            return True
    return False


_kept = threading.local()


def _release_cycles(response: HttpResponse) -> None:
    """Break the reference cycles DRF leaves among a request's objects, once
    its response is rendered: the Request holds itself and the view in
    ``parser_context``, the view holds the Request and the Response, and the
    Response holds both in ``renderer_context``. Broken, the request's
    objects (some sixty: view, Request, parsers, negotiation, user, Django's
    request) are freed by reference counting as soon as the response is
    done, instead of piling up for the cyclic garbage collector."""
    context = getattr(response, "renderer_context", None)
    if not context:
        return
    request = context.get("request")
    if request is not None:
        request.parser_context = {}
    context.clear()


def _keep_or_release() -> None:
    """After a request, what ``close_old_connections`` does for each database,
    except that a healthy connection stays with its request thread.

    Django's pooled connections have ``CONN_MAX_AGE = 0``, so every request
    checked one out of the pool and gave it back (a lock, the pool's
    bookkeeping, the connection's set-up each time). Here a thread keeps
    its connection while it is fit, as Django does for persistent
    connections: it goes back to the pool (which drops a broken one) after
    an error that left it unusable, a transaction or autocommit state left
    behind, or ``KEEP_CONNECTION_SECONDS`` of use."""
    now = time.monotonic()
    for conn in connections.all(initialized_only=True):
        raw = conn.connection
        if raw is None:
            continue
        if getattr(_kept, conn.alias, (None, 0.0))[0] is not raw:
            setattr(_kept, conn.alias, (raw, now + KEEP_CONNECTION_SECONDS))
        until = getattr(_kept, conn.alias)[1]
        if conn.in_atomic_block or conn.get_autocommit() != conn.settings_dict["AUTOCOMMIT"]:
            conn.close()
        elif conn.errors_occurred and not conn.is_usable():
            conn.close()
        elif now >= until:
            conn.close()
        else:
            conn.errors_occurred = False
            conn.health_check_done = False


class APIBridge(base.BaseHandler):
    """An ASGI app running Django's synchronous handler, one thread hop per request."""

    request_class = ASGIRequest

    def __init__(self, threads: int | None = None) -> None:
        super().__init__()
        self.load_middleware(is_async=False)
        self.lean_signals = _lean_signals()
        self._resource_patterns = _resource_patterns()
        self._resource_matches: list = [None] * len(self._resource_patterns)
        #: Whether a resource request's view runs as it is: no view or
        #: template-response middleware to apply, no ATOMIC_REQUESTS to wrap it in.
        self._plain_views = not (
            self._view_middleware
            or self._template_response_middleware
            or any(config.get("ATOMIC_REQUESTS") for config in connections.settings.values())
        )
        self._close_caches = _caches_to_close()
        self.threads = RequestThreads(threads or request_threads(), most=request_threads_max())

    def _resource_match(self, request):
        """The reused match of a resource route for ``request``, or None
        (another path, or a request with its own ``urlconf``)."""
        if hasattr(request, "urlconf"):
            return None
        path = request.path_info
        if not path.startswith("/"):
            return None
        for index, pattern in enumerate(self._resource_patterns):
            if pattern.pattern.match(path[1:]) is None:
                continue
            cached = self._resource_matches[index]
            if cached is None:
                cached = super().resolve_request(request)
                if cached.func is not pattern.callback or cached.args or cached.kwargs:
                    # Not what the argument above promises: resolve
                    # every time, as Django does.
                    self._resource_patterns = ()
                    return None
                self._resource_matches[index] = cached
            request.resolver_match = cached
            return cached
        return None

    def resolve_request(self, request):
        """Django's ``resolve_request``, with the resource routes' match reused."""
        match = self._resource_match(request)
        if match is not None:
            return match
        resolved = super().resolve_request(request)
        if hasattr(request, "urlconf"):
            request.kapi_urlconf_set = True  # Django set it for this thread: reset it after
        return resolved

    def get_response(self, request):
        """Django's ``get_response`` without setting the thread's URLconf to
        the default: nothing in an API request sets another one but
        ``resolve_request`` for a request whose ``urlconf`` a middleware set,
        and ``_close`` resets it then."""
        if not self.lean_signals:
            return super().get_response(request)
        response = self._middleware_chain(request)
        response._resource_closers.append(request.close)
        if response.status_code >= 400:
            base.log_response(
                "%s: %s", response.reason_phrase, request.path, response=response, request=request
            )
        return response

    def _get_response(self, request):
        """Django's ``_get_response``; for a resource route with plain views
        (``_plain_views``), only what remains of it: call the view, hand an
        exception to the exception middleware, refuse a None, render a
        template response."""
        match = self._resource_match(request) if self._plain_views else None
        if match is None:
            return super()._get_response(request)
        callback = match.func
        try:
            response = callback(request)
        except Exception as exc:
            response = self.process_exception_by_middleware(exc, request)
            if response is None:
                raise
        self.check_response(response, callback)
        if callable(getattr(response, "render", None)):
            # DRF's own dispatch (OPTIONS, TRACE) answers a template response.
            try:
                response = response.render()
            except Exception as exc:
                response = self.process_exception_by_middleware(exc, request)
                if response is None:
                    raise
        return response

    def load_middleware(self, is_async: bool = False) -> None:
        """Django's ``load_middleware`` (synchronous) over :func:`api_middleware`."""
        self._view_middleware = []
        self._template_response_middleware = []
        self._exception_middleware = []
        handler = convert_exception_to_response(self._get_response)
        for path in reversed(api_middleware()):
            middleware = import_string(path)
            if not getattr(middleware, "sync_capable", True):
                raise ImproperlyConfigured(f"API middleware {path} must be sync_capable")
            try:
                instance = middleware(handler)
            except MiddlewareNotUsed:
                continue
            if hasattr(instance, "process_view"):
                self._view_middleware.insert(0, instance.process_view)
            if hasattr(instance, "process_template_response"):
                self._template_response_middleware.append(instance.process_template_response)
            if hasattr(instance, "process_exception"):
                self._exception_middleware.append(instance.process_exception)
            handler = convert_exception_to_response(instance)
        self._middleware_chain = handler

    async def __call__(self, scope, receive, send) -> None:
        try:
            body = await _read_body(receive)
        except _Disconnected:
            return
        if body:
            scope = _with_length(scope, body)
        listcache.bind_loop(asyncio.get_running_loop())
        status, headers, content, made = await self.threads.call(self._respond, scope, body)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        if len(content) <= SEND_SLICE:
            await send({"type": "http.response.body", "body": content})
        else:
            with memoryview(content) as view:
                for start in range(0, len(view), SEND_SLICE):
                    await send({"type": "http.response.body", "body": view[start:start + SEND_SLICE], "more_body": True})
            await send({"type": "http.response.body"})
        content = None
        if made >= heap.TRIM_AFTER_BYTES:
            await self.threads.call(heap.after_big_answer, made)

    def _respond(self, scope, body: bytes) -> tuple[int, list, bytes, int]:
        """Run in a request thread: the whole Django request, response closed
        (``request_finished``) before the bytes go back to the loop. Returns
        the status, headers and body, and how big the answer was to make (its
        size before gzip: what the heap held)."""
        if self.lean_signals:
            if settings.DEBUG:
                reset_queries()
        else:
            signals.request_started.send(sender=self.__class__, scope=scope)
        request = None
        try:
            request = self.request_class(scope, io.BytesIO(body))
        except UnicodeDecodeError:
            response = status_response(errors.bad_request("the request is not valid UTF-8"))
        else:
            response = self.get_response(request)
        try:
            if response.streaming:
                content = b"".join(response)
            else:
                content = response.content
            made = max(len(content), getattr(response, "kapi_made_bytes", 0))
            answer = response.status_code, _headers(response), content, made
        finally:
            self._close(response, urlconf_set=getattr(request, "kapi_urlconf_set", False))
        return answer

    def _close(self, response: HttpResponse, urlconf_set: bool = False) -> None:
        _release_cycles(response)
        if not self.lean_signals:
            response.close()
            return
        # HttpResponse.close() without its request_finished signal: closes what
        # the response holds, then the signal's work (close_caches, and
        # _keep_or_release for close_old_connections).
        for closer in response._resource_closers:
            try:
                closer()
            except Exception:
                pass
        response._resource_closers.clear()
        response.closed = True
        try:
            if urlconf_set:
                set_urlconf(None)
            if self._close_caches:
                close_caches()
        finally:
            _keep_or_release()
