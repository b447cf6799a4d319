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
it) to a thread that runs the synchronous middleware chain once, and sends
status, headers and bytes from the loop: one hop there and one back.

Django's request signals fire in the thread that serves the request, as under
WSGI, so ``close_old_connections`` sees that thread's database connection.
"""

from __future__ import annotations

import asyncio
import contextvars
import io
import os
from concurrent.futures import ThreadPoolExecutor

from django.core import signals
from django.core.handlers import base
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpResponse

from kapi import errors
from kapi.api.middleware import status_response
from kapi.api.parsers import MAX_BODY_BYTES
from kapi.storage import listcache

__all__ = ["APIBridge", "request_threads"]


def request_threads() -> int:
    """Threads per API process serving finished requests (``KAPI_REQUEST_THREADS``)."""
    return max(1, int(os.environ.get("KAPI_REQUEST_THREADS", "16")))


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


class APIBridge(base.BaseHandler):
    """An ASGI app running Django's synchronous handler, one thread hop per request."""

    request_class = ASGIRequest

    def __init__(self, threads: int | None = None) -> None:
        super().__init__()
        self.load_middleware(is_async=False)
        self.executor = ThreadPoolExecutor(
            max_workers=threads or request_threads(), thread_name_prefix="kapi-request"
        )

    async def __call__(self, scope, receive, send) -> None:
        try:
            body = await _read_body(receive)
        except _Disconnected:
            return
        loop = asyncio.get_running_loop()
        listcache.bind_loop(loop)
        context = contextvars.copy_context()
        status, headers, content = await loop.run_in_executor(
            self.executor, context.run, self._respond, scope, body
        )
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": content})

    def _respond(self, scope, body: bytes) -> tuple[int, list, bytes]:
        """Run in a request thread: the whole Django request, response closed
        (``request_finished``) before the bytes go back to the loop."""
        signals.request_started.send(sender=self.__class__, scope=scope)
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
            return response.status_code, _headers(response), content
        finally:
            response.close()
