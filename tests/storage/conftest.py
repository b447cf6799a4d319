"""The storage contract runs in this process against the real PostgreSQL
storage (``django_in_process``), in autocommit as the server runs it: no test
transaction wraps it, because ``resourceVersion`` horizons and compare-and-swap
are about committed writes. Every test works in resources of its own, in
GROUP or groups ending in it, removed at the end of the session."""

from __future__ import annotations

import asyncio
import itertools
import threading
import uuid
from collections.abc import Iterator

import pytest
from django_in_process import django_db_modify_db_settings  # noqa: F401 - the fixture

GROUP = "contract.storage.test.kapi.dev"
_numbers = itertools.count()


@pytest.fixture(scope="session")
def storage(django_db_modify_db_settings, django_db_blocker) -> Iterator[object]:  # noqa: F811
    """The storage on the in-process PostgreSQL's database, migrated here (not
    pytest-django's per-test transactions: they would hide what commits do)."""
    from django.core.management import call_command
    from django.db import connection

    from kapi.storage import default_storage

    with django_db_blocker.unblock():
        call_command("migrate", verbosity=0, interactive=False)
        yield default_storage()
        with connection.cursor() as cur:
            for table in ("kapi_object", "kapi_change"):
                cur.execute(f'DELETE FROM {table} WHERE "group" = %s OR "group" LIKE %s', [GROUP, f"%.{GROUP}"])


@pytest.fixture
def resource(storage) -> str:
    """A resource (plural) no other test writes."""
    return f"widgets{next(_numbers)}"


def widget(name: str, namespace: str = "", **data) -> dict:
    """An object of GROUP to store (a fresh uid each time)."""
    meta = {"name": name, "uid": str(uuid.uuid4())}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": f"{GROUP}/v1", "kind": "Widget", "metadata": meta, **data}


def revision(obj: dict) -> int:
    """A stored object's resourceVersion as a number."""
    return int(obj["metadata"]["resourceVersion"])


def key_lookup_plan(table: str = "kapi_object") -> str:
    """EXPLAIN of a prepared lookup by key on ``table`` as storage runs it
    (a generic plan, ``kapi.storage.backend.statements.GENERIC_PLANS``)."""
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute("SHOW plan_cache_mode")
        (mode,) = cur.fetchone()
        cur.execute("SET plan_cache_mode = force_generic_plan")
        try:
            cur.execute(
                f"PREPARE kapi_test_lookup(text, text, text, text) AS SELECT resource_version, data FROM {table}"
                ' WHERE "group" = $1 AND resource = $2 AND namespace = $3 AND name = $4'
            )
            cur.execute("EXPLAIN EXECUTE kapi_test_lookup('', 'namespaces', '', 'default')")
            return "\n".join(line for (line,) in cur.fetchall())
        finally:
            cur.execute("DEALLOCATE kapi_test_lookup")
            cur.execute(f"SET plan_cache_mode = {mode}")


def finds_by_the_whole_key(plan: str) -> bool:
    """Whether ``plan`` reaches the row through an index on all of the key
    (not a scan of the table, nor of a namespace with the rest as a filter)."""
    conditions = [line for line in plan.splitlines() if "Index Cond" in line]
    return (
        "Seq Scan" not in plan
        and "Filter" not in plan
        and any(all(f"({column})" in line for column in ('"group"', "resource", "namespace", "name")) for line in conditions)
    )


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """An event loop in a thread of its own, as an API process runs the cache;
    this thread writes through Django's connection meanwhile."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()


def on_loop(loop: asyncio.AbstractEventLoop, fn):
    """``fn()`` run on ``loop`` (where a watch cache's channels change)."""
    async def run():
        return fn()

    return asyncio.run_coroutine_threadsafe(run(), loop).result(10)


def start_cache(loop, cache) -> None:
    """Start a watch cache's listener on ``loop``."""
    asyncio.run_coroutine_threadsafe(cache.start(), loop).result(10)


def stop_cache(loop, cache) -> None:
    """Stop the listener ``start_cache`` started."""
    async def stop():
        cache.shutdown()
        cache._task.cancel()
        try:
            await cache._task
        except asyncio.CancelledError:
            pass

    asyncio.run_coroutine_threadsafe(stop(), loop).result(10)
