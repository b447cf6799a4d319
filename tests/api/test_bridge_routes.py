"""The bridge resolves resource URLs without Django's resolver
(``APIBridge.resolve_request``): for every path, the match (view, arguments,
route, patterns tried) or the 404 must be Django's own."""

from __future__ import annotations

import io

import django_in_process  # noqa: F401 - Django set up in this process
import pytest
from django.core.handlers.asgi import ASGIRequest
from django.urls import Resolver404, get_resolver

from kapi.api.bridge import APIBridge

PATHS = [
    "/api/v1/namespaces",
    "/api/v1/namespaces/ns/configmaps",
    "/api/v1/namespaces/ns/configmaps/name",
    "/api/v1/namespaces/ns/finalize",
    "/apis/apps/v1/deployments",
    "/apis/apps/v1/namespaces/ns/deployments/name/scale",
    "/apis/a.b.c/v1beta1/namespaces/ns/widgets/w/status",
    "/api/v1/x%0A",
    "/api/v1/namespaces/x\n",
    "/api//v1/x",
    "/apis/g//x/y",
    "/apis/g/v1/",
    "/api/v1",
    "/api/v1/",
    "/apis/g/v1",
    "/apis",
    "/api",
    "/version",
    "/openapi/v3/apis/apps/v1",
    "/metrics",
    "/readyz/ping",
    "/admin/",
    "/nowhere/api/v1/x",
    "/",
]


def _request(path: str) -> ASGIRequest:
    scope = {
        "type": "http", "method": "GET", "path": path, "raw_path": path.encode(),
        "root_path": "", "query_string": b"", "headers": [], "scheme": "https",
        "server": ("127.0.0.1", 6443), "client": ("127.0.0.1", 1),
    }
    return ASGIRequest(scope, io.BytesIO(b""))


def _django(path: str):
    try:
        match = get_resolver().resolve(path)
    except Resolver404:
        return None
    return match.func, match.args, match.kwargs, match.route, match.tried


@pytest.fixture(scope="module")
def bridge():
    bridge = APIBridge(threads=1)
    yield bridge
    bridge.threads.shutdown()


def test_resource_routes_are_taken_from_the_api_urls(bridge) -> None:
    """The shortcut is on: both resource patterns of ``kapi.api.urls``."""
    assert [p.pattern.regex.pattern for p in bridge._resource_patterns] == [
        r"^api/[^/]+/.+$",
        r"^apis/[^/]+/[^/]+/.+$",
    ]


def test_every_path_resolves_as_django_resolves_it(bridge) -> None:
    """Twice over, so that the second round uses the kept matches."""
    for _ in range(2):
        for path in PATHS:
            request = _request(path)
            try:
                match = bridge.resolve_request(request)
                mine = match.func, match.args, match.kwargs, match.route, match.tried
                assert request.resolver_match is match
            except Resolver404:
                mine = None
            assert mine == _django(request.path_info), path


def test_caches_are_closed_only_where_closing_does_something() -> None:
    """After each API request the bridge skips Django's ``close_caches``
    while every configured backend's ``close`` is a no-op (the default
    local-memory cache), and keeps it for one that closes connections."""
    from django.test import override_settings

    from kapi.api.bridge import _caches_to_close

    assert not _caches_to_close()
    memcached = {"default": {"BACKEND": "django.core.cache.backends.memcached.PyMemcacheCache"}}
    with override_settings(CACHES=memcached):
        assert _caches_to_close()


def test_the_send_slice_the_big_answer_tests_assume():
    from kapi.api import bridge
    from tests.api import test_big_answers_http

    assert bridge.SEND_SLICE == test_big_answers_http.SEND_SLICE


def _answer_through(bridge, answer, monkeypatch) -> tuple[list, list]:
    """Drive ``bridge`` as the loop does for one request whose Django answer
    is ``answer``; returns what was sent and the sizes the heap was asked to
    trim after."""
    import asyncio

    from kapi.runtime import heap
    from kapi.storage import listcache

    trims: list[int] = []
    monkeypatch.setattr(heap, "after_big_answer", trims.append)
    # Not this test's loop for the process's list cache: it ends with the test.
    monkeypatch.setattr(listcache, "bind_loop", lambda loop: None)
    monkeypatch.setattr(bridge, "_respond", lambda scope, body: answer)
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/api/v1/configmaps", "headers": []}
    asyncio.run(bridge(scope, receive, send))
    return sent, trims


def test_an_answer_big_to_make_is_followed_by_a_trim_however_small_it_went_out(bridge, monkeypatch):
    """gzip (kubectl and client-go ask for it) shrinks a list of 100 MB to a
    few: the heap still held the 100 MB, and is trimmed after the send."""
    from kapi.runtime import heap

    made = heap.TRIM_AFTER_BYTES + 1
    sent, trims = _answer_through(bridge, (200, [], b"compressed", made), monkeypatch)
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    assert sent[1]["body"] == b"compressed"
    assert trims == [made]
    _, trims = _answer_through(bridge, (200, [], b"small", 5), monkeypatch)
    assert trims == []


def test_gzip_records_how_big_the_answer_was_to_make():
    from django.http import HttpResponse
    from django.test import RequestFactory

    from kapi.api.middleware import GZIP_THRESHOLD, KubernetesAPIMiddleware

    body = b"x" * (GZIP_THRESHOLD * 4)
    request = RequestFactory().get("/api/v1/configmaps", HTTP_ACCEPT_ENCODING="gzip")
    response = KubernetesAPIMiddleware._compress(request, HttpResponse(body))
    assert response["Content-Encoding"] == "gzip" and len(response.content) < len(body)
    assert response.kapi_made_bytes == len(body)
