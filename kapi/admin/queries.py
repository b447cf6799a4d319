"""Reads for the admin pages, straight from the tables the API serves.

Each function is one SQL statement, so that a page costs a fixed number of
queries whatever it shows (no N+1). Lists use keyset pagination on an index
(``kapi_object_key`` for name order, ``kapi_object_rv`` for change order), never
OFFSET, so the 1,000th page costs what the first does.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

import orjson
from django.db import connection

from kapi.models import Change
from kapi.registry.resource import ResourceType
from kapi.selectors import parse_label_selector
from kapi.storage import selection

__all__ = [
    "SORTS",
    "ListPage",
    "ListRequest",
    "decode_cursor",
    "dependents",
    "encode_cursor",
    "history",
    "kind_counts",
    "list_page",
    "namespaces",
    "related_events",
    "to_object",
    "versions",
]

Object = dict[str, Any]

#: Sort keys offered on list pages: name order (by namespace, then name) or
#: change order (resourceVersion), each both ways.
SORTS = {
    "name": ("namespace, name", ("namespace", "name"), False),
    "-name": ("namespace DESC, name DESC", ("namespace", "name"), True),
    "updated": ("resource_version", ("resource_version",), False),
    "-updated": ("resource_version DESC", ("resource_version",), True),
}


def encode_cursor(values: tuple) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(list(values))).decode().rstrip("=")


def decode_cursor(text: str) -> tuple | None:
    try:
        values = orjson.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (ValueError, TypeError):
        return None
    return tuple(values) if isinstance(values, list) else None


def to_object(rt: ResourceType, resource_version: int, data: Any) -> Object:
    """A stored row as the API serves it (version converted, resourceVersion put back)."""
    obj = orjson.loads(data) if isinstance(data, (str, bytes)) else data
    obj.setdefault("metadata", {})["resourceVersion"] = str(resource_version)
    return rt.strategy.from_storage(obj, rt.version)


@dataclass
class ListRequest:
    namespace: str | None = None
    search: str = ""
    label_selector: str = ""
    sort: str = "name"
    after: tuple | None = None
    before: tuple | None = None
    limit: int = 50


@dataclass
class ListPage:
    items: list[Object] = field(default_factory=list)
    total: int = 0
    next_cursor: str | None = None
    prev_cursor: str | None = None


def list_page(rt: ResourceType, request: ListRequest) -> ListPage:
    """One page of objects and the number matching; two statements.

    Raises ``kapi.selectors.SelectorError`` for a bad label selector.
    """
    where = ['"group" = %s', "resource = %s"]
    params: list[Any] = [rt.stored_group, rt.stored_resource]
    if rt.namespaced and request.namespace:
        where.append("namespace = %s")
        params.append(request.namespace)
    if request.search:
        where.append("strpos(name, %s) > 0")
        params.append(request.search)
    if request.label_selector.strip():
        predicates, args = selection.label_predicates(parse_label_selector(request.label_selector))
        where += [p.format(labels="labels") for p in predicates]
        params += args
    count_sql = f"SELECT count(*) FROM kapi_object WHERE {' AND '.join(where)}"
    count_params = list(params)

    order, columns, descending = SORTS.get(request.sort, SORTS["name"])
    backwards = request.before is not None and request.after is None
    cursor = request.before if backwards else request.after
    if cursor is not None and len(cursor) == len(columns):
        # Forward on an ascending sort reads keys above the cursor; every other
        # combination flips the comparison.
        above = descending == backwards
        where.append(f"({', '.join(columns)}) {'<' if not above else '>'} ({', '.join(['%s'] * len(columns))})")
        params += list(cursor)
    if backwards:
        order = ", ".join(
            c.replace(" DESC", "") if c.endswith(" DESC") else f"{c} DESC" for c in order.split(", ")
        )
    sql = (
        "SELECT namespace, name, resource_version, data FROM kapi_object "
        f"WHERE {' AND '.join(where)} ORDER BY {order} LIMIT %s"
    )
    params.append(request.limit + 1)
    with connection.cursor() as cur:
        cur.execute(sql, params)
        rows = cur.fetchall()
        cur.execute(count_sql, count_params)
        (total,) = cur.fetchone()
    more = len(rows) > request.limit
    rows = rows[: request.limit]
    if backwards:
        rows.reverse()

    def key(row) -> tuple:
        return (row[2],) if columns == ("resource_version",) else (row[0], row[1])

    page = ListPage(items=[to_object(rt, rv, data) for (_ns, _n, rv, data) in rows], total=total)
    if rows and backwards:
        page.next_cursor = encode_cursor(key(rows[-1]))
        page.prev_cursor = encode_cursor(key(rows[0])) if more else None
    elif rows:
        page.next_cursor = encode_cursor(key(rows[-1])) if more else None
        page.prev_cursor = encode_cursor(key(rows[0])) if cursor is not None else None
    return page


def kind_counts() -> dict[tuple[str, str], int]:
    """Objects per stored (group, resource), in one statement."""
    with connection.cursor() as cur:
        cur.execute('SELECT "group", resource, count(*) FROM kapi_object GROUP BY 1, 2')
        return {(g, r): n for g, r, n in cur.fetchall()}


def namespaces(rt: ResourceType) -> list[str]:
    """The namespaces offered in the filter: every Namespace object."""
    with connection.cursor() as cur:
        cur.execute(
            """SELECT name FROM kapi_object WHERE "group" = '' AND resource = 'namespaces'
               ORDER BY name LIMIT 1000"""
        )
        return [n for (n,) in cur.fetchall()]


def dependents(uid: str, namespace: str) -> list[tuple[str, str, str, str, Object]]:
    """Objects that name ``uid`` among their ownerReferences.

    Rows are (group, resource, namespace, name, metadata). Dependents live in
    the owner's namespace, or are cluster-scoped.
    """
    with connection.cursor() as cur:
        cur.execute(
            """SELECT "group", resource, namespace, name, data->'metadata'
               FROM kapi_object
               WHERE namespace IN (%s, '')
                 AND data->'metadata'->'ownerReferences' @> %s::jsonb
               ORDER BY 1, 2, 3, 4 LIMIT 200""",
            [namespace, orjson.dumps([{"uid": uid}]).decode()],
        )
        return [
            (g, r, ns, n, orjson.loads(m) if isinstance(m, (str, bytes)) else m)
            for g, r, ns, n, m in cur.fetchall()
        ]


def related_events(uid: str, namespace: str, limit: int = 50) -> list[Object]:
    """Events about the object (``involvedObject.uid``), newest first."""
    with connection.cursor() as cur:
        cur.execute(
            """SELECT data FROM kapi_object
               WHERE "group" = '' AND resource = 'events' AND namespace = %s
                 AND data->'involvedObject'->>'uid' = %s
               ORDER BY resource_version DESC LIMIT %s""",
            [namespace or "default", uid, limit],
        )
        return [orjson.loads(d) if isinstance(d, (str, bytes)) else d for (d,) in cur.fetchall()]


def history(uid: str, limit: int = 500) -> list[Change]:
    """The object's entries in the change log, newest first, without their bodies."""
    return list(
        Change.objects.filter(uid=uid)
        .only("resource_version", "type", "created", "uid")
        .order_by("-resource_version")[:limit]
    )


def versions(uid: str, resource_versions: list[int]) -> dict[int, Change]:
    """Full change-log entries of the object at the given versions, in one statement."""
    return {
        c.resource_version: c
        for c in Change.objects.filter(uid=uid, resource_version__in=resource_versions)
    }
