"""Reads for the admin's GitOps pages: many objects at once, by key, by owner,
by label, in a fixed number of statements whatever the page shows.

* ``in_namespaces``: every object of a collection in some namespaces (the
  Syncs a person may read), one statement on the key index;
* ``at_keys``: the objects at many keys (a Sync's inventory), one statement;
* ``owned_by``: the objects naming any of many uids among their
  ownerReferences, one statement on ``kapi_owner_uids(data)`` (GIN, partial:
  migration 0005; its predicate appears verbatim so the index is used), so
  a tree of owners is read one level per statement, never one per node;
* ``labelled``: the metadata of every object carrying a label key (the
  objects Syncs applied, ``sync.kapi.dev/name``), on the labels GIN index;
* ``changes_since``: which namespaces changed after a version (the admin's
  live pages), a range of the change log's primary key.

Objects come back as stored, ``metadata.resourceVersion`` put back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson
from django.db import connection

from kapi.storage.interface import Object

__all__ = ["StoredObject", "at_keys", "changes_since", "in_namespaces", "labelled", "owned_by", "with_labels"]


@dataclass(frozen=True)
class StoredObject:
    group: str
    resource: str
    namespace: str
    name: str
    object: Object


def _loads(value: Any) -> Any:
    return orjson.loads(value) if isinstance(value, (str, bytes)) else value


def _rows(sql: str, params: Sequence[Any]) -> list[StoredObject]:
    with connection.cursor() as cur:
        cur.execute(sql, list(params))
        out = []
        for group, resource, namespace, name, rv, data in cur.fetchall():
            obj = _loads(data)
            obj.setdefault("metadata", {})["resourceVersion"] = str(rv)
            out.append(StoredObject(group, resource, namespace, name, obj))
        return out


_COLUMNS = '"group", resource, namespace, name, resource_version, data'


def in_namespaces(group: str, resource: str, namespaces: Sequence[str] | None,
                  limit: int = 5000) -> list[StoredObject]:
    """Objects of (group, resource) in ``namespaces`` (None: all), in key order."""
    where, params = '"group" = %s AND resource = %s', [group, resource]
    if namespaces is not None:
        where += " AND namespace = ANY(%s::text[])"
        params.append(list(namespaces))
    return _rows(
        f"SELECT {_COLUMNS} FROM kapi_object WHERE {where} ORDER BY namespace, name LIMIT %s",
        [*params, limit],
    )


def at_keys(keys: Sequence[tuple[str, str, str, str]]) -> list[StoredObject]:
    """The objects at the stored keys (group, resource, namespace, name) that exist."""
    if not keys:
        return []
    columns = [list(c) for c in zip(*keys, strict=True)]
    return _rows(
        f"SELECT {_COLUMNS} FROM kapi_object"
        ' WHERE ("group", resource, namespace, name) IN'
        " (SELECT * FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[]))",
        columns,
    )


def owned_by(uids: Sequence[str], limit: int = 10_000) -> list[StoredObject]:
    """The objects naming one of ``uids`` in their ownerReferences."""
    if not uids:
        return []
    return _rows(
        f"SELECT {_COLUMNS} FROM kapi_object"
        " WHERE data->'metadata' ? 'ownerReferences' AND kapi_owner_uids(data) && %s::text[]"
        " ORDER BY namespace, name LIMIT %s",
        [list(uids), limit],
    )


def labelled(label: str, among: tuple[str, Sequence[str]] | None = None) -> list[Object]:
    """The labels and managedFields of the objects carrying the label key
    ``label``; with ``among`` (a label key, values), only those whose label
    of that key has one of the values."""
    where, params = "labels ? %s", [label]
    if among is not None:
        where += " AND labels->>%s = ANY(%s::text[])"
        params += [among[0], list(among[1])]
    with connection.cursor() as cur:
        cur.execute(
            "SELECT jsonb_build_object('labels', data->'metadata'->'labels',"
            " 'managedFields', data->'metadata'->'managedFields')"
            f" FROM kapi_object WHERE {where}",
            params,
        )
        return [_loads(meta) for (meta,) in cur.fetchall()]


def with_labels(labels: dict[str, str]) -> list[StoredObject]:
    """The objects whose labels include all of ``labels``, in key order."""
    return _rows(
        f"SELECT {_COLUMNS} FROM kapi_object WHERE labels @> %s::jsonb ORDER BY 1, 2, 3, 4",
        [orjson.dumps(labels).decode()],
    )


def changes_since(resource_version: int, limit: int = 1000) -> tuple[int, set[tuple[str, str, str]], bool]:
    """The change log after ``resource_version``, as (the newest version, the
    (group, resource, namespace) changed, whether there were more than
    ``limit`` changes); a range read on the log's primary key, however long
    the log. ``resource_version`` 0: only the newest version."""
    with connection.cursor() as cur:
        if resource_version <= 0:
            cur.execute("SELECT coalesce(max(resource_version), 0) FROM kapi_change")
            return int(cur.fetchone()[0]), set(), False
        cur.execute(
            'SELECT resource_version, "group", resource, namespace FROM kapi_change'
            " WHERE resource_version > %s ORDER BY resource_version LIMIT %s",
            [resource_version, limit + 1],
        )
        rows = cur.fetchall()
    if not rows:
        return resource_version, set(), False
    more = len(rows) > limit
    rows = rows[:limit]
    return int(rows[-1][0]), {(g, r, ns) for _rv, g, r, ns in rows}, more
