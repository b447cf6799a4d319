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
