"""Change events: rows of the change log as watches consume them.

A :class:`ChangeEvent` is one ``kapi_change`` row plus the key's previous state
(what a selector matched before the write), which watches need to turn a write
into ``ADDED``/``DELETED`` when an object starts or stops matching (kube's
``watchCacheEvent.PrevObject``). The JSON stays bytes until someone needs it:
one parse per process for selector matching, and a fresh parse per served
form for encoding (cheaper than a deep copy).

Rows are read in version order and only up to a *horizon* (see
``kapi/storage/postgres.py``): every version at or below it has committed or
aborted, so reading ``(after, horizon]`` never skips a write that commits
later. The same statements, through libpq, serve the per-process listener
(asyncio, psycopg; ``collections_changes_statement``: the collections it
follows) and a watch catching up from the database (Django's connection;
``changes_statement``: one collection, or one namespace of it).
"""

from __future__ import annotations

from typing import Any

import orjson
from django.db import connection, connections

from kapi.storage.backend.statements import Statement
from kapi.storage.postgres import _stamp

__all__ = [
    "CHANGES_SQL",
    "ChangeEvent",
    "change_from_row",
    "changes_statement",
    "collections_changes_statement",
    "conninfo",
    "fetch_changes",
    "previous_states_statement",
]

Object = dict[str, Any]

#: The state of the key of ``c`` (a change-log row, or the same columns)
#: before ``c.resource_version``: the newest earlier change of the key.
_PREVIOUS = """(
         SELECT q.data::text FROM kapi_change q
         WHERE q."group" = c."group" AND q.resource = c.resource
           AND q.namespace = c.namespace AND q.name = c.name
           AND q.resource_version < c.resource_version
         ORDER BY q.resource_version DESC LIMIT 1
       )"""

_CHANGES = """
SELECT c.resource_version, c."group", c.resource, c.namespace, c.name, c.type,
       c.data::text,
       {previous}
FROM kapi_change c
WHERE c.resource_version > %s AND c.resource_version <= %s{{scope}}
ORDER BY c.resource_version
LIMIT %s
"""

#: Change rows in ``(after, upto]``, in version order, with the key's
#: previous state for MODIFIED (for DELETED the row itself holds the last
#: state). The previous state is looked up inside CASE so that PostgreSQL
#: looks it up for MODIFIED rows only (a LEFT JOIN LATERAL probed the index for
#: every row and dropped the result for the others).
CHANGES_SQL = _CHANGES.format(previous=f"CASE WHEN c.type = 'MODIFIED' THEN {_PREVIOUS} END")

#: The same rows without the previous states, for the watch cache's listener:
#: its channels know most of them already (``Channel.fill_previous``) and it
#: asks for the others with ``previous_states_statement``.
_CHANGES_WITHOUT_PREVIOUS = _CHANGES.format(previous="NULL::text")

#: The state before each of the writes given as arrays of resourceVersion,
#: group, resource, namespace and name (NULL where the log no longer has one).
_PREVIOUS_STATES = Statement("previous_states", f"""
SELECT c.resource_version, {_PREVIOUS}
FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[], %s::text[])
  AS c(resource_version, "group", resource, namespace, name)
""")


class ChangeEvent:
    """One write as a watch sees it. Shared by every watcher of the process:
    ``object``/``prev`` are parsed once and must not be mutated; ``fresh()``
    returns a private copy. ``memo`` caches encodings keyed by the caller."""

    __slots__ = (
        "_object",
        "_prev",
        "group",
        "memo",
        "name",
        "namespace",
        "prev_raw",
        "raw",
        "resource",
        "revision",
        "type",
    )

    def __init__(
        self,
        revision: int,
        group: str,
        resource: str,
        namespace: str,
        name: str,
        type: str,
        raw: str,
        prev_raw: str | None,
    ) -> None:
        self.revision = revision
        self.group = group
        self.resource = resource
        self.namespace = namespace
        self.name = name
        self.type = type
        self.raw = raw
        # For a delete the previous state is the last state, which is the row.
        self.prev_raw = raw if type == "DELETED" else prev_raw
        self._object: Object | None = None
        self._prev: Object | None = None
        self.memo: dict = {}

    @property
    def object(self) -> Object:
        if self._object is None:
            self._object = orjson.loads(self.raw)
        return self._object

    @property
    def prev(self) -> Object | None:
        if self.prev_raw is None:
            return None
        if self._prev is None:
            self._prev = self.object if self.prev_raw is self.raw else orjson.loads(self.prev_raw)
        return self._prev

    def fresh(self, previous: bool = False) -> Object:
        """A private copy of the object (or of its previous state)."""
        return orjson.loads(self.prev_raw if previous else self.raw)

    def stored(self, previous: bool = False) -> Object:
        """``fresh``, as storage hands objects out: ``metadata.resourceVersion``
        this change's version, keys in the order kube writes them."""
        return _stamp(self.fresh(previous), self.revision)

    def __repr__(self) -> str:
        return f"<ChangeEvent {self.revision} {self.type} {self.resource} {self.namespace}/{self.name}>"


def change_from_row(row: tuple) -> ChangeEvent:
    """The event of a change-log row as ``changes_statement`` returns it:
    PostgreSQL's text (``bytes``) per value; the JSON stays bytes."""
    rv, group, resource, namespace, name, kind, raw, prev_raw = row
    return ChangeEvent(
        int(rv), group.decode(), resource.decode(), namespace.decode(), name.decode(), kind.decode(), raw, prev_raw
    )


#: One prepared statement per scope shape (kapi.storage.backend.statements).
_STATEMENTS: dict[str, Statement] = {}


def changes_statement(
    group: str | None = None, resource: str | None = None, namespace: str | None = None
) -> tuple[Statement, list[Any]]:
    """The statement for a scope and its scope parameters (to follow ``after,
    upto`` and precede ``limit``)."""
    scope, params = [], []
    if group is not None:
        scope.append('c."group" = %s AND c.resource = %s')
        params += [group, resource]
    if namespace is not None:
        scope.append("c.namespace = %s")
        params.append(namespace)
    shape = ("_resource" if group is not None else "") + ("_namespace" if namespace is not None else "")
    statement = _STATEMENTS.get(shape)
    if statement is None:
        text = "".join(f" AND {s}" for s in scope)
        statement = _STATEMENTS[shape] = Statement("changes" + shape, CHANGES_SQL.format(scope=text))
    return statement, params


def collections_changes_statement(collections: tuple[tuple[str, str], ...]) -> tuple[Statement, list[Any]]:
    """The statement for the changes of any of ``collections`` ((group,
    resource) pairs) and its scope parameter: the watch cache reads only the
    collections it has channels for, as each of kube's cachers watches only
    its own prefix in etcd. Its rows carry no previous states (None)."""
    statement = _STATEMENTS.get("_collections")
    if statement is None:
        scope = """ AND (c."group" || '/' || c.resource) = ANY(%s::text[])"""
        statement = _STATEMENTS["_collections"] = Statement(
            "changes_collections", _CHANGES_WITHOUT_PREVIOUS.format(scope=scope)
        )
    return statement, [_text_array_literal(f"{group}/{resource}" for group, resource in collections)]


def previous_states_statement(events: list[ChangeEvent]) -> tuple[Statement, list[Any]]:
    """The statement for the previous states of ``events`` and its
    parameters; its rows are (resourceVersion, previous state's JSON or None)."""
    return _PREVIOUS_STATES, [
        "{" + ",".join(str(e.revision) for e in events) + "}",
        _text_array_literal(e.group for e in events),
        _text_array_literal(e.resource for e in events),
        _text_array_literal(e.namespace for e in events),
        _text_array_literal(e.name for e in events),
    ]


def _text_array_literal(values) -> str:
    """PostgreSQL's text form of a ``text[]``: every element quoted."""
    quoted = ('"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"' for v in values)
    return "{" + ",".join(quoted) + "}"


def fetch_changes(
    after: int,
    upto: int,
    *,
    group: str | None = None,
    resource: str | None = None,
    namespace: str | None = None,
    limit: int = 1000,
) -> list[ChangeEvent]:
    """Change events in ``(after, upto]`` through Django's connection (sync).

    ``upto`` must be at or below a horizon. Returns at most ``limit`` events; a
    full page means there may be more after the last one.
    """
    statement, scope = changes_statement(group, resource, namespace)
    return [change_from_row(r) for r in connection.run_statement(statement, [after, upto, *scope, limit])]


_NOT_LIBPQ = {"pool", "isolation_level", "server_side_binding", "assume_role", "cursor_factory", "context", "prepare_threshold"}


def conninfo(application_name: str | None = None) -> str:
    """libpq connection string of the default database, for the dedicated
    connections (listener, notifier) that live outside Django's pool; named
    ``application_name`` in ``pg_stat_activity`` if given."""
    from psycopg.conninfo import make_conninfo

    params = connections["default"].get_connection_params()
    clean = {k: v for k, v in params.items() if k not in _NOT_LIBPQ and v not in (None, "")}
    if application_name:
        clean["application_name"] = application_name
    return make_conninfo("", **clean)
