"""After a purge, vacuum leaves ``kapi_object`` its pages, and a lookup by key
stays on an index of the whole key (migration 0013): a prepared statement's generic plan,
built right after a purge, must not be a sequential scan that then runs for
every write while the table grows back."""

from __future__ import annotations

from django.db import connection
from storage.conftest import GROUP, finds_by_the_whole_key, key_lookup_plan

ROWS = 3000  # about 3 MB: pages past any free space the session left


def _size() -> int:
    with connection.cursor() as cur:
        cur.execute("SELECT pg_relation_size('kapi_object')")
        return cur.fetchone()[0]


def test_a_purged_table_keeps_its_pages_and_its_index_plan(storage, resource) -> None:
    with connection.cursor() as cur:
        cur.execute(
            "INSERT INTO kapi_object"
            ' ("group", resource, namespace, name, uid, resource_version, data, labels)'
            " SELECT %s, %s, 'purged', 'o' || i, gen_random_uuid(), kapi_next_rv(),"
            " jsonb_build_object('data', repeat('x', 900)), '{}'::jsonb"
            " FROM generate_series(1, %s) AS i",
            [GROUP, resource, ROWS],
        )
    grown = _size()
    with connection.cursor() as cur:
        cur.execute('DELETE FROM kapi_object WHERE "group" = %s AND resource = %s', [GROUP, resource])
        cur.execute("VACUUM (ANALYZE) kapi_object")
    assert _size() == grown  # truncation would have cut the emptied pages off
    plan = key_lookup_plan()
    assert finds_by_the_whole_key(plan), plan
