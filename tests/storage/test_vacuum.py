"""After a purge, vacuum leaves ``kapi_object`` its pages, and a lookup by key
stays on the key index (migration 0013): a prepared statement's generic plan,
built right after a purge, must not be a sequential scan that then runs for
every write while the table grows back."""

from __future__ import annotations

from django.db import connection
from storage.conftest import GROUP

ROWS = 3000  # about 3 MB: pages past any free space the session left


def _size() -> int:
    with connection.cursor() as cur:
        cur.execute("SELECT pg_relation_size('kapi_object')")
        return cur.fetchone()[0]


def _generic_plan_of_a_lookup_by_key() -> str:
    with connection.cursor() as cur:
        cur.execute("SET plan_cache_mode = force_generic_plan")
        try:
            cur.execute(
                "PREPARE kapi_test_lookup(text, text, text, text) AS"
                " SELECT resource_version, data FROM kapi_object"
                ' WHERE "group" = $1 AND resource = $2 AND namespace = $3 AND name = $4'
            )
            cur.execute("EXPLAIN EXECUTE kapi_test_lookup('', 'namespaces', '', 'default')")
            return "\n".join(line for (line,) in cur.fetchall())
        finally:
            cur.execute("DEALLOCATE kapi_test_lookup")
            cur.execute("RESET plan_cache_mode")


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
    plan = _generic_plan_of_a_lookup_by_key()
    assert "kapi_object_key" in plan and "Seq Scan" not in plan, plan
