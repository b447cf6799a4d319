"""Summaries of stored objects on PostgreSQL: what controllers ask of storage.

The ``Storage`` methods that find objects (without their bodies) by uid, by owner, by namespace or by
a field, and count what a namespace holds (``kapi.storage.interface``,
"what controllers ask"), as a mixin of ``PostgresStorage``. Each is one
statement over ``kapi_object``, written for the indexes migration 0005 adds:
``kapi_owner_uids(data)`` (GIN, partial on ``ownerReferences``) for
dependents, ``kapi_object_deleting`` (partial on ``deletionTimestamp``) for
the objects being deleted, ``kapi_object_namespace`` (the key, namespace
first: migration 0014) for a namespace's content, and the unique ``uid``.
The predicates those partial indexes are defined with appear here verbatim,
or PostgreSQL could not use them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
from django.db import connection

from kapi.storage.interface import GroupResource, Key, ObjectSummary

__all__ = ["SummaryReads"]


def _columns(alias: str = "") -> str:
    """The columns ``_summary`` reads, of the table aliased ``alias``."""
    t = f"{alias}." if alias else ""
    return (
        f'{t}uid::text, {t}"group", {t}resource, {t}namespace, {t}name,'
        f" {t}data->'metadata' ? 'deletionTimestamp',"
        f" {t}data->'metadata'->'finalizers', {t}data->'metadata'->'ownerReferences'"
    )


_SUMMARY = _columns()


def _loads(value: Any) -> Any:
    return orjson.loads(value) if isinstance(value, (str, bytes)) else value


def _summary(row: tuple) -> ObjectSummary:
    uid, group, resource, namespace, name, deleting, finalizers, refs = row
    finalizers, refs = _loads(finalizers), _loads(refs)
    return ObjectSummary(
        Key(group, resource, namespace, name),
        uid,
        bool(deleting),
        tuple(f for f in finalizers if isinstance(f, str)) if isinstance(finalizers, list) else (),
        tuple(r for r in refs if isinstance(r, dict)) if isinstance(refs, list) else (),
    )


def _summaries(sql: str, params: Sequence[Any] = ()) -> list[ObjectSummary]:
    with connection.cursor() as cur:
        cur.execute(sql, list(params))
        return [_summary(row) for row in cur.fetchall()]


def _in_collections(collections: Sequence[GroupResource]) -> tuple[str, list[Any]]:
    """A predicate: the row is of one of ``collections``."""
    return (
        '("group", resource) IN (SELECT * FROM unnest(%s::text[], %s::text[]))',
        [[g for g, _ in collections], [r for _, r in collections]],
    )


_DEPENDENTS = f"""
SELECT {_SUMMARY}
FROM kapi_object
WHERE data->'metadata' ? 'ownerReferences' AND kapi_owner_uids(data) && %s::text[]
ORDER BY uid
"""

_BEING_DELETED = f"""
SELECT {_SUMMARY}
FROM kapi_object WHERE data->'metadata' ? 'deletionTimestamp'
  AND (("group", resource) IN (SELECT * FROM unnest(%s::text[], %s::text[]))
       OR data->'metadata'->'finalizers' ?| %s::text[])
"""

_NAMESPACES_WITHOUT = f"""
SELECT {_columns("ns")}
FROM kapi_object ns
WHERE ns."group" = %s AND ns.resource = %s AND ns.namespace = ''
  AND NOT (ns.data->'metadata' ? 'deletionTimestamp')
  AND NOT EXISTS (SELECT 1 FROM kapi_object m WHERE m."group" = %s
                  AND m.resource = %s AND m.namespace = ns.name AND m.name = %s)
"""

_FINALIZERS = (
    "SELECT f, count(*) FROM kapi_object,"
    " jsonb_array_elements_text(CASE WHEN jsonb_typeof(data->'metadata'->'finalizers')"
    " = 'array' THEN data->'metadata'->'finalizers' ELSE '[]' END) AS f"
    " WHERE namespace = %s AND {where} GROUP BY f ORDER BY f"
)


class SummaryReads:
    """The ``Storage`` methods that read summaries (see the module docstring)."""

    def summaries_by_uid(self, uids: Sequence[str]) -> list[ObjectSummary]:
        if not uids:
            return []
        return _summaries(
            f"SELECT {_SUMMARY} FROM kapi_object WHERE uid = ANY(%s::uuid[])", [list(uids)]
        )

    def summaries_by_name(
        self, collection: GroupResource, namespace: str, names: Sequence[str]
    ) -> list[ObjectSummary]:
        if not names:
            return []
        return _summaries(
            f'SELECT {_SUMMARY} FROM kapi_object WHERE "group" = %s AND resource = %s'
            " AND namespace = %s AND name = ANY(%s::text[])",
            [*collection, namespace, list(names)],
        )

    def summaries_with(self, collection: GroupResource, field: str) -> list[ObjectSummary]:
        return _summaries(
            f'SELECT {_SUMMARY} FROM kapi_object WHERE "group" = %s AND resource = %s'
            " AND data ? %s",
            [*collection, field],
        )

    def has_field(self, key: Key, path: Sequence[str]) -> bool:
        with connection.cursor() as cur:
            cur.execute(
                'SELECT 1 FROM kapi_object WHERE "group" = %s AND resource = %s'
                " AND namespace = %s AND name = %s AND data #> %s::text[] IS NOT NULL",
                [key.group, key.resource, key.namespace, key.name, list(path)],
            )
            return cur.fetchone() is not None

    def dependents(self, owner_uids: Sequence[str], limit: int | None = None) -> list[ObjectSummary]:
        if not owner_uids:
            return []
        sql, params = _DEPENDENTS, [list(owner_uids)]
        if limit is not None:
            sql += " LIMIT %s"
            params.append(limit)
        return _summaries(sql, params)

    def with_owners(self) -> list[ObjectSummary]:
        return _summaries(
            f"SELECT {_SUMMARY} FROM kapi_object WHERE data->'metadata' ? 'ownerReferences'"
        )

    def being_deleted(
        self, finalizers: Sequence[str], collections: Sequence[GroupResource] = ()
    ) -> list[ObjectSummary]:
        _where, types = _in_collections(collections)
        return _summaries(_BEING_DELETED, [*types, list(finalizers)])

    def namespaces_without(self, namespaces: GroupResource, member: Key) -> list[ObjectSummary]:
        return _summaries(
            _NAMESPACES_WITHOUT,
            [*namespaces, member.group, member.resource, member.name],
        )

    def count_in_namespace(
        self, namespace: str, collections: Sequence[GroupResource]
    ) -> dict[GroupResource, int]:
        where, params = _in_collections(collections)
        with connection.cursor() as cur:
            cur.execute(
                f'SELECT "group", resource, count(*) FROM kapi_object WHERE namespace = %s'
                f' AND {where} GROUP BY "group", resource',
                [namespace, *params],
            )
            return {(g, r): int(n) for g, r, n in cur.fetchall()}

    def finalizers_in_namespace(
        self, namespace: str, collections: Sequence[GroupResource]
    ) -> dict[str, int]:
        where, params = _in_collections(collections)
        with connection.cursor() as cur:
            cur.execute(_FINALIZERS.format(where=where), [namespace, *params])
            return {f: int(n) for f, n in cur.fetchall()}

    def count_deleting_in_namespace(self, namespace: str) -> int:
        with connection.cursor() as cur:
            cur.execute(
                "SELECT count(*) FROM kapi_object WHERE namespace = %s"
                " AND data->'metadata' ? 'deletionTimestamp'",
                [namespace],
            )
            return int(cur.fetchone()[0])
