"""Upgrading a database of the previous layout keeps the lifecycle's work and
cursor, moves the sync's cursor, and asks for every Sync and GitRepository
once in place of the sync's dropped queue rows (migrations kapi 0010-0011,
sync 0004-0005)."""

from __future__ import annotations

import uuid

from django.core.management import call_command
from django.db import connection

from kapi.storage import Key, default_storage

_SYNC = Key("sync.kapi.dev", "syncs", "migrated", f"app-{uuid.uuid4().hex[:6]}")


def _query(sql: str, params=()) -> list[tuple]:
    with connection.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall()


def _old_layout(attempt_uid: str) -> None:
    with connection.cursor() as cur:
        cur.execute(
            'INSERT INTO kapi_lifecycle_work (kind, uid, "group", resource, namespace, name,'
            " policy, generation, attempts, due, request_id)"
            " VALUES ('attempt', %s, '', 'configmaps', 'ns', 'cm', '', 2, 1, now(), 'rid-1')",
            [attempt_uid],
        )
        # (Migrating back recreated the table empty; an old database has the row.)
        cur.execute(
            "INSERT INTO kapi_lifecycle_cursor (id, revision, wanted) VALUES (1, 12345, false)"
            " ON CONFLICT (id) DO UPDATE SET revision = EXCLUDED.revision"
        )
        cur.execute(
            "INSERT INTO sync_work_item (kind, namespace, name, requested, handled, reason, drift,"
            " failures, request_id) VALUES ('Sync', %s, %s, 3, 2, 'push', true, 0, '')",
            [_SYNC.namespace, _SYNC.name],
        )
        cur.execute("INSERT INTO sync_change_cursor (id, revision) VALUES (1, 777)")


def test_upgrading_keeps_lifecycle_work_and_cursors_and_requests_every_sync(database) -> None:
    storage = default_storage()
    created = storage.create(_SYNC, {
        "apiVersion": "sync.kapi.dev/v1", "kind": "Sync",
        "metadata": {"name": _SYNC.name, "namespace": _SYNC.namespace, "uid": str(uuid.uuid4())},
    })
    attempt_uid = str(uuid.uuid4())
    try:
        with connection.cursor() as cur:
            cur.execute("DELETE FROM kapi_work_item")
        call_command("migrate", "kapi", "0009", verbosity=0, interactive=False)
        _old_layout(attempt_uid)
        call_command("migrate", verbosity=0, interactive=False)

        assert _query(
            "SELECT controller, namespace, name, generation, attempts, request_id"
            " FROM kapi_work_item WHERE key = %s", [attempt_uid]
        ) == [("attempt", "ns", "cm", 2, 1, "rid-1")]
        cursors = dict(_query("SELECT consumer, revision FROM kapi_feed_cursor"))
        assert (cursors["lifecycle"], cursors["sync"]) == (12345, 777)
        assert _query(
            "SELECT controller, hints FROM kapi_work_item WHERE key = %s",
            [f"{_SYNC.namespace}/{_SYNC.name}"],
        ) == [("sync", ["resync"])]
        assert _query("SELECT to_regclass('sync_work_item'), to_regclass('sync_change_cursor')") == [
            (None, None)
        ]
    finally:
        storage.delete(_SYNC, int(created["metadata"]["resourceVersion"]))
        with connection.cursor() as cur:
            cur.execute("DELETE FROM kapi_work_item")
