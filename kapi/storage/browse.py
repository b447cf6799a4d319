"""Reads for an operator browsing what is stored (the admin UI), not for the API.

The API reads through ``Storage``; a person browsing wants what no Kubernetes
verb offers: a page with the number of all matches, in name or change order,
both ways; the objects that name an owner; the newest objects whose field
points at one; an object's entries in the change log and its body at two of
them. Each function is one statement (a page is two), so a page of the admin
costs a fixed number of queries whatever it shows. Lists use keyset
pagination on an index (``kapi_object_key`` for name order, ``kapi_object_rv``
for change order), never OFFSET, so the 1,000th page costs what the first does.

Objects come back as stored: ``metadata.resourceVersion`` put back, in the
stored version (the caller converts to the version it serves).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

import orjson
from django.db import connection

from kapi.storage import selection
from kapi.storage.interface import Object

if TYPE_CHECKING:
    from kapi.selectors import LabelSelector

__all__ = [
    "ORDERS",
    "BrowsePage",
    "BrowseQuery",
    "BrowseRow",
    "ChangeEntry",
    "Dependent",
    "browse",
    "changes_at",
    "dependents",
    "history",
    "newest_with_field",
]

#: Orders a page may be read in: the columns of its key and the ORDER BY.
ORDERS = {
    "name": ("namespace", "name"),
    "updated": ("resource_version",),
}


@dataclass(frozen=True)
class BrowseQuery:
    """One page of a collection: ``namespace`` (None: all), names containing
    ``search``, ``labels``; in ``order`` (a key of ``ORDERS``), ``descending``
    or not; the ``limit`` objects after the key ``after``, or the ``limit``
    before the key ``before`` (the previous page)."""

    group: str
    resource: str
    namespace: str | None = None
    search: str = ""
    labels: LabelSelector | None = None
    order: str = "name"
    descending: bool = False
    after: tuple | None = None
    before: tuple | None = None
    limit: int = 50


@dataclass(frozen=True)
class BrowseRow:
    """A stored object and its key in the page's order."""

    key: tuple
    object: Object


@dataclass
class BrowsePage:
    """Rows in the order asked for; ``total`` matches the filters (not the keys);
    ``more``: further rows lie beyond the page in the direction it was read."""

    rows: list[BrowseRow] = field(default_factory=list)
    total: int = 0
    more: bool = False


@dataclass(frozen=True)
class Dependent:
    """An object naming an owner in its ``ownerReferences``."""

    group: str
    resource: str
    namespace: str
    name: str
    metadata: Object


@dataclass(frozen=True)
class ChangeEntry:
    """One entry of the change log: ``data`` is the object as written (None when
    not asked for)."""

    resource_version: int
    type: str
    created: datetime
    data: Object | None = None


def _loads(value: Any) -> Any:
    return orjson.loads(value) if isinstance(value, (str, bytes)) else value


def _stamped(data: Any, resource_version: int) -> Object:
    obj = _loads(data)
    obj.setdefault("metadata", {})["resourceVersion"] = str(resource_version)
    return obj


def _is_uid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except (ValueError, TypeError, AttributeError):
        return False
    return True


def browse(query: BrowseQuery) -> BrowsePage:
    """One page of objects and the number matching; two statements.

    A bad ``order`` reads in name order; a cursor of the wrong shape is ignored.
    """
    where = ['"group" = %s', "resource = %s"]
    params: list[Any] = [query.group, query.resource]
    if query.namespace:
        where.append("namespace = %s")
        params.append(query.namespace)
    if query.search:
        where.append("strpos(name, %s) > 0")
        params.append(query.search)
    if query.labels is not None:
        predicates, args = selection.label_predicates(query.labels)
        where += [p.format(labels="labels") for p in predicates]
        params += args
    count_sql = f"SELECT count(*) FROM kapi_object WHERE {' AND '.join(where)}"
    count_params = list(params)

    columns = ORDERS.get(query.order, ORDERS["name"])
    backwards = query.before is not None and query.after is None
    cursor = query.before if backwards else query.after
    if cursor is not None and len(cursor) == len(columns):
        # Forward on an ascending order reads keys above the cursor; every other
        # combination flips the comparison.
        above = query.descending == backwards
        marks = ", ".join(["%s"] * len(columns))
        where.append(f"({', '.join(columns)}) {'>' if above else '<'} ({marks})")
        params += list(cursor)
    descending = query.descending != backwards
    order = ", ".join(f"{c} DESC" if descending else c for c in columns)
    sql = (
        "SELECT namespace, name, resource_version, data FROM kapi_object "
        f"WHERE {' AND '.join(where)} ORDER BY {order} LIMIT %s"
    )
    params.append(query.limit + 1)
    with connection.cursor() as cur:
        cur.execute(sql, params)
        rows = cur.fetchall()
        cur.execute(count_sql, count_params)
        (total,) = cur.fetchone()
    more = len(rows) > query.limit
    rows = rows[: query.limit]
    if backwards:
        rows.reverse()
    by_version = columns == ("resource_version",)
    return BrowsePage(
        rows=[
            BrowseRow((rv,) if by_version else (ns, name), _stamped(data, rv))
            for ns, name, rv, data in rows
        ],
        total=int(total),
        more=more,
    )


def dependents(uid: str, namespace: str, limit: int = 200) -> list[Dependent]:
    """Objects that name ``uid`` among their ownerReferences, in key order.

    Dependents live in the owner's namespace, or are cluster-scoped.
    """
    with connection.cursor() as cur:
        cur.execute(
            """SELECT "group", resource, namespace, name, data->'metadata'
               FROM kapi_object
               WHERE namespace IN (%s, '')
                 AND data->'metadata'->'ownerReferences' @> %s::jsonb
               ORDER BY 1, 2, 3, 4 LIMIT %s""",
            [namespace, orjson.dumps([{"uid": uid}]).decode(), limit],
        )
        return [
            Dependent(g, r, ns, n, _loads(meta)) for g, r, ns, n, meta in cur.fetchall()
        ]


def newest_with_field(
    group: str,
    resource: str,
    namespace: str,
    path: tuple[str, ...],
    value: str,
    limit: int = 50,
) -> list[Object]:
    """Objects of (group, resource) in ``namespace`` whose string field at
    ``path`` is ``value`` (Events about an object: ``involvedObject.uid``),
    newest write first."""
    with connection.cursor() as cur:
        cur.execute(
            """SELECT resource_version, data FROM kapi_object
               WHERE "group" = %s AND resource = %s AND namespace = %s
                 AND data #>> %s = %s
               ORDER BY resource_version DESC LIMIT %s""",
            [group, resource, namespace, list(path), value, limit],
        )
        return [_stamped(data, rv) for rv, data in cur.fetchall()]


def history(uid: str, limit: int = 500) -> list[ChangeEntry]:
    """The object's entries in the change log, newest first, without bodies
    (as far back as compaction left them)."""
    if not _is_uid(uid):
        return []
    with connection.cursor() as cur:
        cur.execute(
            """SELECT resource_version, type, created FROM kapi_change
               WHERE uid = %s ORDER BY resource_version DESC LIMIT %s""",
            [uid, limit],
        )
        return [ChangeEntry(int(rv), kind, at) for rv, kind, at in cur.fetchall()]


def changes_at(uid: str, resource_versions: list[int]) -> dict[int, ChangeEntry]:
    """The object's change-log entries at the given versions, with bodies (the
    object as that write left it), by version; versions not kept are absent."""
    if not _is_uid(uid) or not resource_versions:
        return {}
    with connection.cursor() as cur:
        cur.execute(
            """SELECT resource_version, type, created, data FROM kapi_change
               WHERE uid = %s AND resource_version = ANY(%s)""",
            [uid, [int(v) for v in resource_versions]],
        )
        return {
            int(rv): ChangeEntry(int(rv), kind, at, _loads(data))
            for rv, kind, at, data in cur.fetchall()
        }
