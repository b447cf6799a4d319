"""When memory cannot answer, PostgreSQL does, with the same result: a
continue token whose snapshot is gone (here no process keeps snapshots,
``KAPI_LIST_SNAPSHOTS=0``) pages on at its revision from the database, and a
consistent list whose process's cache cannot catch up (its listener is held
behind a lock) is answered by the database after the bounded wait (here 1 s,
``KAPI_LIST_CONSISTENT_WAIT_SECONDS``), and counted as a fallback; and a
resource too big for the process's budget (here 60 objects,
``KAPI_LIST_CACHE_MAX_OBJECTS``) is listed from the database while the others
stay in memory."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterator

import psycopg
import pytest
import yaml
from kapi_testserver import KapiServer, serving

from tests.api.conftest import API, ROOT_CA, wait_for_root_ca
from tests.api.test_list_http import make, names
from tests.api.test_list_snapshot_http import (
    consistent_reads,
    database_list,
    fresh_get,
    walk,
)


@pytest.fixture(scope="module")
def no_snapshots_server() -> Iterator[KapiServer]:
    # The fallback test sits out the whole consistent-list wait (3 s by
    # default): 1 s still leaves an unlocked cache ample time to catch up.
    yield from serving({**os.environ, "KAPI_LIST_SNAPSHOTS": "0",
                        "KAPI_LIST_CONSISTENT_WAIT_SECONDS": "1",
                        "KAPI_LIST_CACHE_MAX_OBJECTS": "60"})


@pytest.fixture(scope="module")
def api2(no_snapshots_server) -> API:
    return API(no_snapshots_server)


@pytest.fixture
def ns2(api2) -> Iterator[str]:
    import uuid

    name = f"f-{uuid.uuid4().hex[:10]}"
    assert api2.post("/api/v1/namespaces", {"metadata": {"name": name}}).status_code == 201
    wait_for_root_ca(api2, name)
    yield name
    api2.delete(f"/api/v1/namespaces/{name}")


def database_url(server: KapiServer) -> str:
    from kapi.runtime.config import _embedded_postgres_url

    return _embedded_postgres_url(server.data_dir / "postgres")


def test_a_token_without_its_snapshot_pages_on_from_postgresql(api2, ns2):
    base = f"/api/v1/namespaces/{ns2}/configmaps"
    for i in range(10):
        make(api2, ns2, f"o{i}", data={"k": str(i)})
    counter = iter(range(100))

    def write(_page):
        k = next(counter)
        make(api2, ns2, f"o{k}x")
        assert api2.delete(f"{base}/o{9 - k}").status_code == 200

    first = fresh_get(api2, base, limit="3")  # served from memory, its snapshot not kept
    revision = int(first.json()["metadata"]["resourceVersion"])
    items, remaining = walk(api2, base, first, write, limit="3")
    assert items == database_list(api2, base, revision)["items"]
    # Eleven objects: the ten and the root-CA publisher's ConfigMap (first in
    # name order).
    assert [o["metadata"]["name"] for o in items] == [ROOT_CA] + [f"o{i}" for i in range(10)]
    assert remaining == [8, 5, 2, None]


def test_a_consistent_list_falls_back_when_the_cache_cannot_catch_up(api2, ns2, no_snapshots_server):
    base = f"/api/v1/namespaces/{ns2}/configmaps"
    # Every process has its cache of configmaps running: the kernel spreads
    # new connections by address, so four could all reach one process (one
    # time in eight) and leave the list under the lock to a process whose
    # cache never started. Sixteen leave that one time in 32,768.
    for _ in range(16):
        assert fresh_get(api2, base).status_code == 200
    fallbacks = consistent_reads(api2, "true")
    with psycopg.connect(database_url(no_snapshots_server)) as db:
        # The watch cache's listener reads the compaction marker with the
        # horizon: while this lock is held it reads nothing new. Writes and
        # the database's own consistent lists do not touch that table.
        db.execute("LOCK TABLE kapi_compaction IN ACCESS EXCLUSIVE MODE")
        made = make(api2, ns2, "after-lock")
        r = fresh_get(api2, base)
        assert names(r) == ["after-lock"]
        assert int(r.json()["metadata"]["resourceVersion"]) >= int(made["metadata"]["resourceVersion"])
        db.rollback()
    assert consistent_reads(api2, "true") == fallbacks + 1


def test_a_resource_over_the_memory_budget_is_listed_from_postgresql(api2, ns2):
    secrets = f"/api/v1/namespaces/{ns2}/secrets"
    configmaps = f"/api/v1/namespaces/{ns2}/configmaps"
    for _ in range(4):  # small: every process keeps secrets and configmaps in memory
        assert fresh_get(api2, secrets).status_code == 200
        assert fresh_get(api2, configmaps).status_code == 200
    kept = consistent_reads(api2, "true", "secrets")
    for i in range(70):  # more than the budget of 60 objects
        assert api2.post(secrets, {"metadata": {"name": f"s{i:02d}"}, "stringData": {"k": str(i)}}).status_code == 201
    configmap_fallbacks = consistent_reads(api2, "true", "configmaps")
    for _ in range(4):
        r = fresh_get(api2, secrets)
        assert r.status_code == 200
        assert [o["metadata"]["name"] for o in r.json()["items"]] == [f"s{i:02d}" for i in range(70)]
        assert fresh_get(api2, configmaps).status_code == 200
    # Every list of secrets was answered by the database; configmaps by memory.
    assert consistent_reads(api2, "true", "secrets") == kept + 4
    assert consistent_reads(api2, "true", "configmaps") == configmap_fallbacks
    # A resourceVersion=0 list of the big resource is whole too.
    r = api2.get(secrets, params={"resourceVersion": "0"})
    assert len(r.json()["items"]) == 70
    # The database's answers are what memory's were: pages with their token
    # and count, each item as a GET serves it, selectors, and YAML (which is
    # encoded from the parsed objects, not from the rows' JSON).
    first = fresh_get(api2, secrets, limit="30")
    items, remaining = walk(api2, secrets, first, limit="30")
    assert [o["metadata"]["name"] for o in items] == [f"s{i:02d}" for i in range(70)]
    assert remaining == [40, 10, None]
    assert items[7] == api2.get(f"{secrets}/s07").json()
    labelled = api2.request("PATCH", f"{secrets}/s07", data='{"metadata":{"labels":{"pick":"me"}}}',
                            headers={"Content-Type": "application/merge-patch+json"})
    assert labelled.status_code == 200, labelled.text
    picked = fresh_get(api2, secrets, labelSelector="pick=me").json()
    assert [o["metadata"]["name"] for o in picked["items"]] == ["s07"]
    as_yaml = api2.get(secrets, headers={"Accept": "application/yaml"})
    assert as_yaml.status_code == 200 and as_yaml.headers["Content-Type"].startswith("application/yaml")
    assert yaml.safe_load(as_yaml.text)["items"] == fresh_get(api2, secrets).json()["items"]


def _token(payload: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")


def _payload(token: str) -> dict:
    return json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))


def test_pages_from_postgresql_count_what_remains_from_their_token(api2, ns2):
    """A page says how many remain; its token carries that, and the next page
    (at the same revision, from the database) says it less its own items. A
    count that is not a count is ignored and counted again."""
    secrets = f"/api/v1/namespaces/{ns2}/secrets"
    for i in range(65):  # over the budget of 60: the database answers
        assert api2.post(secrets, {"metadata": {"name": f"s{i:02d}"}}).status_code == 201
    first = fresh_get(api2, secrets, limit="30").json()
    assert first["metadata"]["remainingItemCount"] == 35
    carried = _payload(first["metadata"]["continue"])
    assert carried["remaining"] == 35

    def next_page(payload: dict) -> dict:
        page = fresh_get(api2, secrets, limit="30", **{"continue": _token(payload)})
        assert page.status_code == 200, page.text
        return page.json()

    second = next_page(carried)
    assert second["metadata"]["remainingItemCount"] == 5
    assert [o["metadata"]["name"] for o in second["items"]] == [f"s{i:02d}" for i in range(30, 60)]
    assert _payload(second["metadata"]["continue"])["remaining"] == 5
    # Written by anything but this server: counted in the database.
    for bogus in (-4, "35", True, None, 1.5):
        edited = {**carried, "remaining": bogus}
        assert next_page(edited)["metadata"]["remainingItemCount"] == 5, bogus
    without = {k: v for k, v in carried.items() if k != "remaining"}
    assert next_page(without)["metadata"]["remainingItemCount"] == 5
    # A client that edits the count misleads only its own list.
    assert next_page({**carried, "remaining": 1000})["metadata"]["remainingItemCount"] == 970
