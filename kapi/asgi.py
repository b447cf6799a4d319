"""ASGI entry point: ``uvicorn kapi.asgi:application``.

API requests that finish (everything but watches) run Django's synchronous
stack once, on a fixed pool of threads, through ``kapi.api.bridge``: one
thread hop per request, body read and response sent on the event loop
(measured: a third less CPU per write than ``a2wsgi``, which crosses threads
for every piece of I/O). The admin UI, git and webhooks (streamed bodies of
any size) keep going through ``a2wsgi``. Watches are long
streams and go through Django's ASGI handler, where an async iterator streams
them on the event loop without holding a thread (``kapi.api.streaming`` sends
their frames straight to ``send``); their connection is bound
(``kapi.api.connection``) so that a stalled watcher can be dropped.
"""

import os
from urllib.parse import parse_qs

from kapi.runtime import startup

startup.pause()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")

import django  # noqa: E402
from a2wsgi import WSGIMiddleware  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402

from kapi.api import connection  # noqa: E402
from kapi.api.middleware import is_api_path  # noqa: E402

__all__ = ["application"]

django.setup(set_prefix=False)

from kapi.api.bridge import APIBridge, request_threads_max  # noqa: E402
from kapi.api.streaming import StreamingASGIHandler  # noqa: E402

_asgi = StreamingASGIHandler()
_api = APIBridge()
_wsgi = WSGIMiddleware(get_wsgi_application(), workers=request_threads_max())
startup.resume()


def _is_watch(scope) -> bool:
    if scope.get("method") != "GET":
        return False
    query = scope.get("query_string", b"")
    if b"watch" not in query:
        return False
    values = parse_qs(query.decode("latin-1")).get("watch", [])
    return bool(values) and values[-1].lower() in ("1", "true")


async def application(scope, receive, send):
    if scope["type"] == "http" and not _is_watch(scope):
        if is_api_path(scope["path"]):
            await _api(scope, receive, send)
        else:
            await _wsgi(scope, receive, send)
    elif scope["type"] == "http":
        # A watch: let a stalled one be dropped (kapi.api.connection).
        token = connection.bind(send)
        try:
            await _asgi(scope, receive, send)
        finally:
            connection.unbind(token)
    else:
        await _asgi(scope, receive, send)
