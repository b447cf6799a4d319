"""A big list cache asked for by a page is filled in the background (here:
more than 5 objects, ``KAPI_LIST_CACHE_BACKGROUND_FILL_OVER=5``; 1,000 by
default): while it fills, PostgreSQL answers the resource's pages (counted as
fallbacks), so no small request waits for a fill; once filled, memory answers.
Every answer is the same list. A whole list (no limit) fills the store itself."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator

import pytest
from kapi_testserver import KapiServer, serving

from tests.api.conftest import API
from tests.api.test_list_http import make, names
from tests.api.test_list_snapshot_http import consistent_reads, fresh_get

RESOURCE = "podtemplates"  # nothing else in this server lists them


@pytest.fixture(scope="module")
def small_fill_server() -> Iterator[KapiServer]:
    yield from serving({**os.environ, "KAPI_LIST_CACHE_BACKGROUND_FILL_OVER": "5"})


def _template(name: str) -> dict:
    return {"template": {"metadata": {"labels": {"t": name}},
                         "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}


def test_a_big_cache_fills_in_the_background_while_postgresql_answers(small_fill_server) -> None:
    api = API(small_fill_server)
    namespace = f"bg-{uuid.uuid4().hex[:8]}"
    assert api.post("/api/v1/namespaces", {"metadata": {"name": namespace}}).status_code == 201
    expected = [f"t{i:02d}" for i in range(12)]
    for name in expected:
        make(api, namespace, name, kind=RESOURCE, **_template(name))
    base = f"/api/v1/namespaces/{namespace}/{RESOURCE}"
    assert (consistent_reads(api, "true", RESOURCE), consistent_reads(api, "false", RESOURCE)) == (0, 0)

    # The first page of a process finds its store empty and too big to fill in
    # the request: PostgreSQL answers, and the fill starts in the background.
    assert names(fresh_get(api, base, limit="100")) == expected
    assert consistent_reads(api, "true", RESOURCE) == 1 and consistent_reads(api, "false", RESOURCE) == 0

    deadline = time.monotonic() + 30
    while consistent_reads(api, "false", RESOURCE) == 0:  # until a filled store answers
        assert time.monotonic() < deadline, "no list was answered from memory"
        assert names(fresh_get(api, base, limit="100")) == expected
        time.sleep(0.05)

    # From memory now, and current: a write shows in the next list.
    make(api, namespace, "t99", kind=RESOURCE, **_template("t99"))
    from_memory = consistent_reads(api, "false", RESOURCE)
    deadline = time.monotonic() + 30
    while consistent_reads(api, "false", RESOURCE) == from_memory:
        assert time.monotonic() < deadline, "no list was answered from memory"
        assert names(fresh_get(api, base, limit="100")) == [*expected, "t99"]


def test_a_whole_list_fills_the_store_itself(small_fill_server) -> None:
    """A list without a limit costs the database about what a fill costs: it
    fills the store in the request and is answered from memory at once."""
    api = API(small_fill_server)
    namespace = f"whole-{uuid.uuid4().hex[:8]}"
    assert api.post("/api/v1/namespaces", {"metadata": {"name": namespace}}).status_code == 201
    expected = [f"e{i}" for i in range(8)]
    for name in expected:
        make(api, namespace, name, kind="endpoints")
    base = f"/api/v1/namespaces/{namespace}/endpoints"
    before = (consistent_reads(api, "true", "endpoints"), consistent_reads(api, "false", "endpoints"))
    assert names(fresh_get(api, base)) == expected
    assert (consistent_reads(api, "true", "endpoints"), consistent_reads(api, "false", "endpoints")) == (
        before[0], before[1] + 1
    )
