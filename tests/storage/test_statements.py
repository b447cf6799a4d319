"""Storage's hot statements through libpq (``kapi.storage.backend.statements``).

Create, get, update and delete skip psycopg's cursors; these tests hold the
path to what a cursor gave: each statement prepared once per connection, a
connection that lost its prepared statements (a pooler's ``DISCARD ALL``) still
writes, ``KAPI_DB_PREPARE=0`` prepares nothing, and database errors arrive as
Django's (what storage and the API map to kube's answers).
"""

from __future__ import annotations

import uuid

import pytest
from django.db import IntegrityError, OperationalError, connection
from storage.conftest import GROUP, finds_by_the_whole_key, key_lookup_plan

from kapi.storage.backend import base
from kapi.storage.backend.statements import Statement
from kapi.storage.errors import KeyExists, ResourceVersionConflict
from kapi.storage.interface import Key, ListQuery
from kapi.storage.postgres import _list_sql


def _obj(name: str) -> dict:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "ns", "uid": str(uuid.uuid4())},
        "spec": {"text": "ünïcode ✓"},
    }


def _prepared() -> list[str]:
    with connection.cursor() as cur:
        cur.execute("SELECT name FROM pg_prepared_statements WHERE name LIKE 'kapi\\_%%' ORDER BY name")
        return [name for (name,) in cur.fetchall()]


def test_each_statement_is_prepared_once_per_connection(storage, resource) -> None:
    for i in range(3):
        key = Key(GROUP, resource, "ns", f"w{i}")
        created = storage.create(key, _obj(f"w{i}"))
        assert storage.get(key) == created
        storage.update(key, {**created, "spec": {"n": i}}, int(created["metadata"]["resourceVersion"]))
    # Preparing a name twice on one connection would have failed a write.
    assert {"kapi_create", "kapi_get", "kapi_update"} <= set(_prepared())


def test_writes_go_on_after_the_connection_lost_its_prepared_statements(storage, resource) -> None:
    key = Key(GROUP, resource, "ns", "a")
    storage.create(key, _obj("a"))
    try:
        with connection.cursor() as cur:
            cur.execute("DISCARD ALL")  # what a pooler does between clients
        assert _prepared() == []
        created = storage.create(Key(GROUP, resource, "ns", "b"), _obj("b"))
        assert created["spec"] == {"text": "ünïcode ✓"}
        assert storage.get(key)["metadata"]["name"] == "a"
        assert "kapi_create" in _prepared()
    finally:
        connection.close()  # DISCARD ALL also reset the session's settings


def test_unprepared_when_told(storage, resource, monkeypatch) -> None:
    monkeypatch.setattr(base, "PREPARE", False)
    with connection.cursor() as cur:
        cur.execute("DEALLOCATE ALL")
    key = Key(GROUP, resource, "ns", "a")
    created = storage.create(key, _obj("a"))
    assert storage.get(key) == created
    with pytest.raises(KeyExists):
        storage.create(key, _obj("a"))
    with pytest.raises(ResourceVersionConflict):
        storage.update(key, created, int(created["metadata"]["resourceVersion"]) - 1)
    assert _prepared() == []


def test_database_errors_are_djangos(storage, resource) -> None:
    statement = Statement("test_unique", "INSERT INTO kapi_object (id) VALUES (%s)")
    with pytest.raises(IntegrityError):  # NOT NULL of the other columns
        connection.run_statement(statement, [1])
    with connection.cursor() as cur:
        cur.execute("SELECT pg_backend_pid()")
        (pid,) = cur.fetchone()
    other = connection.copy()
    try:
        with other.cursor() as cur:
            cur.execute("SELECT pg_terminate_backend(%s)", [pid])
    finally:
        other.close()
    with pytest.raises(OperationalError):
        storage.get(Key(GROUP, resource, "ns", "a"))
    connection.close()  # what the bridge does with a connection that failed
    assert storage.create(Key(GROUP, resource, "ns", "a"), _obj("a"))["metadata"]["name"] == "a"


def test_statements_run_one_generic_plan(storage, resource) -> None:
    """Planned once per connection, whatever the values and the statistics:
    a custom plan per execution cost planning time on every write, and with
    stale statistics picked a scan of the whole namespace for a lookup by key."""
    connection.close()  # a connection set up as the server's are
    for i in range(8):
        key = Key(GROUP, resource, f"ns{i}", "w")
        created = storage.create(key, _obj("w"))
        storage.update(key, storage.get(key), int(created["metadata"]["resourceVersion"]))
    with connection.cursor() as cur:
        cur.execute(
            "SELECT name, generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE name IN ('kapi_get', 'kapi_update')"
        )
        plans = {name: (generic, custom) for name, generic, custom in cur.fetchall()}
    assert plans == {"kapi_get": (8, 0), "kapi_update": (8, 0)}


def test_a_lookup_by_key_uses_the_whole_key_before_any_statistics(storage) -> None:
    """A new database has no statistics of ``kapi_object`` until its first
    autoanalyze; the plan of a get by key must still find the row by all of
    its key, not read the whole namespace through an index on it alone. A
    fresh copy of the table (its indexes included) has no statistics."""
    with connection.cursor() as cur:
        cur.execute("CREATE TEMP TABLE fresh_objects (LIKE kapi_object INCLUDING ALL)")
        try:
            plan = key_lookup_plan("fresh_objects")
        finally:
            cur.execute("DROP TABLE fresh_objects")
    assert finds_by_the_whole_key(plan), plan


def test_a_list_reads_history_only_for_keys_changed_since_before_any_statistics(storage) -> None:
    """A list as of a revision takes the state at that revision of the keys
    changed since from the change log. Planned without statistics (a new
    database before its first autoanalyze, here fresh copies of both tables),
    that must still be one probe per changed key: planned as a join, every
    object's history was matched against every changed key, and a list of
    10,000 new ConfigMaps read 1.7 million buffers (6 s). The work is counted
    in buffers, which does not depend on the machine's speed."""
    objects = 2000
    with connection.cursor() as cur:
        # Temporary tables come first in the search path: the list reads these.
        cur.execute("CREATE TEMP TABLE kapi_object (LIKE public.kapi_object INCLUDING ALL)")
        cur.execute("CREATE TEMP TABLE kapi_change (LIKE public.kapi_change INCLUDING ALL)")
        try:
            for table, extra_columns, extra_values in (
                ("kapi_object", "labels", "'{}'"),
                ("kapi_change", "type", "'ADDED'"),
            ):
                cur.execute(
                    f'INSERT INTO {table} ("group", resource, namespace, name, uid, resource_version, data,'
                    f" {extra_columns}) SELECT %s, 'widgets', 'ns', 'w' || i, gen_random_uuid(), i,"
                    f""" jsonb_build_object('metadata', jsonb_build_object('name', 'w' || i)), {extra_values}"""
                    " FROM generate_series(1, %s) AS i",
                    [GROUP, objects],
                )
            # The newest object changed after the revision listed.
            cur.execute(
                "INSERT INTO kapi_change (\"group\", resource, namespace, name, uid, resource_version, data, type)"
                " SELECT \"group\", resource, namespace, name, uid, %s, data, 'MODIFIED' FROM kapi_object"
                " WHERE name = %s",
                [objects + 1, f"w{objects}"],
            )
            cur.execute(f"UPDATE kapi_object SET resource_version = {objects + 1} WHERE name = 'w{objects}'")
            sql, params = _list_sql(ListQuery(GROUP, "widgets"), objects)
            cur.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, params)
            (plan,) = cur.fetchone()[0]
            cur.execute(sql, params)
            listed = cur.fetchall()
        finally:
            cur.execute("DROP TABLE pg_temp.kapi_object, pg_temp.kapi_change")
    rows = {name: revision for _namespace, name, revision, _data in listed}
    assert len(rows) == objects and rows[f"w{objects}"] == objects  # the changed one, as it was
    top = plan["Plan"]
    buffers = sum(top.get(f"{kind} {what} Blocks", 0) for kind in ("Shared", "Local") for what in ("Hit", "Read"))
    assert buffers < 5 * objects, buffers
