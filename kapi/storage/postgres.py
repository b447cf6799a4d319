"""PostgreSQL storage: the current-object table plus the change log.

Every write is ONE statement (a writable CTE), so it is atomic and costs one
round trip in autocommit mode: it takes a resourceVersion from
``kapi_next_rv()``, writes the object row conditionally on its previous version,
and appends the change-log row.

Consistent reads use the *horizon*: ``kapi_rv_horizon()`` returns a version H
such that every transaction that took a version <= H has ended. Versions come
from a sequence, but transactions commit in any order, so the largest committed
version is not safe to report: a smaller one may still be in flight. The
function reads the sequence, then waits for the writers that were running at
that moment, and only for them (migration 0008): ``kapi_next_rv()`` assigns the
writer's transaction id and takes a per-backend advisory lock before it takes a
version, so no writer can hold a version without being visible as a running
writer, and a transaction that took no version (background bookkeeping, an
operator's session) never holds reads back. A list "as of H" reads unchanged rows from ``kapi_object`` and the state
at H of rows changed since from ``kapi_change``, all in one statement (one
snapshot).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import orjson
from django.db import IntegrityError, connection, transaction

from kapi.storage import selection
from kapi.storage.backend.statements import Statement
from kapi.storage.errors import (
    KeyExists,
    KeyNotFound,
    NamespaceTerminating,
    ResourceVersionConflict,
    ResourceVersionExpired,
)
from kapi.storage.interface import (
    Change,
    ChangeFilter,
    EncodedItem,
    EncodedList,
    EncodedPage,
    FeedBatch,
    Key,
    ListPage,
    ListQuery,
    Object,
    Storage,
    encode_json,
)
from kapi.storage.notify import notify_change
from kapi.storage.summaries import SummaryReads

__all__ = ["PostgresStorage", "encoded_item"]

#: Rows a streamed list reads per chunk (``list_encoded``).
STREAM_ROWS = 500

#: First key of the advisory locks behind ``exclusive`` ("kapi").
_EXCLUSIVE_CLASS = 0x6B617069

_CREATE = Statement("create", """
WITH v AS (SELECT kapi_next_rv() AS rv),
o AS (
  INSERT INTO kapi_object ("group", resource, namespace, name, uid, resource_version, data, labels)
  SELECT %s, %s, %s, %s, %s, v.rv, %s::jsonb, %s::jsonb FROM v
  RETURNING "group", resource, namespace, name, uid, resource_version, data
),
c AS (
  INSERT INTO kapi_change (resource_version, "group", resource, namespace, name, uid, type, data)
  SELECT resource_version, "group", resource, namespace, name, uid, 'ADDED', data FROM o
)
SELECT resource_version FROM o
""")

# The same write, gated on its namespace in the same statement (one round trip
# instead of a read first): no version is taken and nothing is written unless
# the namespace row exists and is not Terminating. The last two columns tell a
# refusal's cause apart.
_CREATE_IN_NAMESPACE = Statement("create_in_namespace", """
WITH ns AS (
  SELECT data->'status'->>'phase' AS phase FROM kapi_object
  WHERE "group" = %s AND resource = %s AND namespace = %s AND name = %s
),
v AS (SELECT kapi_next_rv() AS rv FROM ns WHERE phase IS DISTINCT FROM 'Terminating'),
o AS (
  INSERT INTO kapi_object ("group", resource, namespace, name, uid, resource_version, data, labels)
  SELECT %s, %s, %s, %s, %s, v.rv, %s::jsonb, %s::jsonb FROM v
  RETURNING "group", resource, namespace, name, uid, resource_version, data
),
c AS (
  INSERT INTO kapi_change (resource_version, "group", resource, namespace, name, uid, type, data)
  SELECT resource_version, "group", resource, namespace, name, uid, 'ADDED', data FROM o
)
SELECT (SELECT resource_version FROM o), EXISTS (SELECT FROM ns), (SELECT phase FROM ns)
""")

_UPDATE = Statement("update", """
WITH v AS (SELECT kapi_next_rv() AS rv),
o AS (
  UPDATE kapi_object SET resource_version = v.rv, data = %s::jsonb, labels = %s::jsonb
  FROM v
  WHERE "group" = %s AND resource = %s AND namespace = %s AND name = %s
    AND resource_version = %s
  RETURNING "group", resource, namespace, name, uid, kapi_object.resource_version, data
),
c AS (
  INSERT INTO kapi_change (resource_version, "group", resource, namespace, name, uid, type, data)
  SELECT resource_version, "group", resource, namespace, name, uid, 'MODIFIED', data FROM o
)
SELECT resource_version FROM o
""")

_DELETE = Statement("delete", """
WITH v AS (SELECT kapi_next_rv() AS rv),
o AS (
  DELETE FROM kapi_object
  WHERE "group" = %s AND resource = %s AND namespace = %s AND name = %s
    AND resource_version = %s
  RETURNING "group", resource, namespace, name, uid, data
),
c AS (
  INSERT INTO kapi_change (resource_version, "group", resource, namespace, name, uid, type, data)
  SELECT v.rv, "group", resource, namespace, name, uid, 'DELETED', data FROM o, v
)
SELECT v.rv, o.data FROM o, v
""")

_GET = Statement("get", """
SELECT resource_version, data FROM kapi_object
WHERE "group" = %s AND resource = %s AND namespace = %s AND name = %s
""")


_GET_BY_UID = """
SELECT "group", resource, namespace, name, resource_version, data FROM kapi_object WHERE uid = %s
"""

_FEED_POSITION = "SELECT revision FROM kapi_feed_cursor WHERE consumer = %s"

# The request behind each change comes from ``kapi_write_origin``
# (``kapi.observability.origin``), written just before the change itself.
_FEED_CHANGES = """
SELECT c.resource_version, c."group", c.resource, c.namespace, c.name, c.uid::text, c.type,
       {metadata}, coalesce(o.request_id, '')
FROM kapi_change c LEFT JOIN kapi_write_origin o ON o.uid = c.uid
WHERE c.resource_version > %s AND c.resource_version <= %s{where}
ORDER BY c.resource_version LIMIT %s
"""
_FEED_WHOLE_METADATA = "c.data->'metadata', c.data->'status'"
#: Only the named keys of the metadata (NULL when it has none of them), no
#: status: what most feeds read of a change is a key or three, and parsing
#: the whole metadata (managedFields included) of every change was the
#: lifecycle feed's biggest cost under a stream of writes.
_FEED_SOME_METADATA = """(SELECT jsonb_object_agg(m.key, m.value) FROM jsonb_each(c.data->'metadata') m
        WHERE m.key = ANY(%s::text[])), NULL"""
_FEED_FILTER = """
  AND (c."group" = ANY(%s::text[]) OR c."group" || '/' || c.resource = ANY(%s::text[])
       OR c.data->'metadata'->'labels' ?| %s::text[])"""

_FEED_ADVANCE = """
INSERT INTO kapi_feed_cursor (consumer, revision) VALUES (%s, %s)
ON CONFLICT (consumer) DO UPDATE
  SET revision = GREATEST(kapi_feed_cursor.revision, EXCLUDED.revision)
"""


def _cursor():
    """A cursor for the feed's fixed statements: prepared once per connection
    where the backend offers it (``kapi.storage.backend``)."""
    prepared = getattr(connection, "prepared_cursor", None)
    return prepared() if prepared is not None else connection.cursor()


def _rows(statement: Statement, params: list) -> list[tuple]:
    """The rows of one of the hot statements above, each value PostgreSQL's
    text (``bytes``) or None (``kapi.storage.backend``'s ``run_statement``)."""
    return connection.run_statement(statement, params)


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


def _loads(value: Any) -> Any:
    return orjson.loads(value) if isinstance(value, (str, bytes)) else value


_TOP_ORDER = ("apiVersion", "kind", "metadata")
_META_ORDER = (
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
)


def _ordered(d: dict, first: tuple[str, ...]) -> dict:
    """jsonb sorts keys by length; put them back in the order kube writes them."""
    out = {k: d[k] for k in first if k in d}
    for k, v in d.items():
        if k not in out:
            out[k] = v
    return out


def _stamp(data: Any, revision: int) -> Object:
    obj = _loads(data)
    meta = obj.get("metadata") or {}
    meta["resourceVersion"] = str(revision)
    obj["metadata"] = _ordered(meta, _META_ORDER)
    return _ordered(obj, _TOP_ORDER)


def _stamped_json(data: str | bytes, revision: int) -> bytes:
    return encode_json(_stamp(data, revision))


def encoded_item(data: str | bytes, revision: int) -> EncodedItem:
    """A stored row's JSON (``data``, without its resourceVersion) as
    :class:`EncodedItem`: parsed, stamped and encoded again, keys in kube's order."""
    return EncodedItem.of(_stamp(data, revision))


def _strip(obj: Object) -> tuple[str, str]:
    """The object's JSON without ``resourceVersion``, and its labels' JSON."""
    meta = obj.get("metadata") or {}
    if "resourceVersion" in meta:
        meta = {k: v for k, v in meta.items() if k != "resourceVersion"}
        obj = {**obj, "metadata": meta}
    return _dumps(obj), _dumps(meta.get("labels") or {})


class PostgresStorage(SummaryReads, Storage):
    """``Storage`` on the ``kapi_object`` / ``kapi_change`` tables (the reads
    of summaries are in ``kapi.storage.summaries``)."""

    def create(self, key: Key, obj: Object, namespace: Key | None = None) -> Object:
        data, labels = _strip(obj)
        row = [key.group, key.resource, key.namespace, key.name, obj["metadata"]["uid"], data, labels]
        # Inside a transaction (``exclusive``), a savepoint keeps a clash from
        # aborting the whole transaction; in autocommit the statement is atomic.
        guard = transaction.atomic() if connection.in_atomic_block else nullcontext()
        try:
            with guard:
                if namespace is None:
                    ((revision,),) = _rows(_CREATE, row)
                else:
                    ns = [namespace.group, namespace.resource, namespace.namespace, namespace.name]
                    ((revision, ns_exists, ns_phase),) = _rows(_CREATE_IN_NAMESPACE, ns + row)
                    if revision is None:
                        if ns_exists != b"t":
                            raise KeyNotFound(namespace)
                        phase = ns_phase.decode() if ns_phase is not None else None
                        raise NamespaceTerminating(namespace, f"namespace phase {phase}")
        except IntegrityError as exc:
            raise KeyExists(key) from exc
        notify_change()
        return _stamp(data, int(revision))

    def get(self, key: Key) -> Object:
        rows = _rows(_GET, [key.group, key.resource, key.namespace, key.name])
        if not rows:
            raise KeyNotFound(key)
        revision, data = rows[0]
        return _stamp(data, int(revision))

    def get_by_uid(self, uid: str) -> tuple[Key, Object] | None:
        with connection.cursor() as cur:
            cur.execute(_GET_BY_UID, [uid])
            row = cur.fetchone()
        if row is None:
            return None
        group, resource, namespace, name, revision, data = row
        return Key(group, resource, namespace, name), _stamp(data, revision)

    def recent(self, key: Key) -> Object | None:
        # The change this process's watch cache last read of the object; when
        # it keeps none, it follows the collection from now on, for the next
        # update (an object is seldom updated once).
        from kapi.storage.watchcache import watch_cache

        cache = watch_cache()
        event = cache.latest(key.group, key.resource, key.namespace, key.name)
        if event is None:
            cache.follow(key.group, key.resource)
            return None
        return _stamp(event.raw, event.revision)

    def update(self, key: Key, obj: Object, expected_revision: int) -> Object:
        data, labels = _strip(obj)
        rows = _rows(_UPDATE, [data, labels, key.group, key.resource, key.namespace, key.name, expected_revision])
        if not rows:
            self._raise_missing_or_conflict(key)
        notify_change()
        return _stamp(data, int(rows[0][0]))

    def delete(self, key: Key, expected_revision: int) -> Object:
        rows = _rows(_DELETE, [key.group, key.resource, key.namespace, key.name, expected_revision])
        if not rows:
            self._raise_missing_or_conflict(key)
        notify_change()
        revision, data = rows[0]
        return _stamp(data, int(revision))

    def _raise_missing_or_conflict(self, key: Key) -> None:
        self.get(key)  # raises KeyNotFound
        raise ResourceVersionConflict(key)

    def atomic(self):
        return transaction.atomic()

    @contextmanager
    def exclusive(self, name: str) -> Iterator[None]:
        # A transaction-scoped advisory lock: released at commit or rollback,
        # and by PostgreSQL if the process dies.
        with transaction.atomic():
            with connection.cursor() as cur:
                cur.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", [_EXCLUSIVE_CLASS, name])
            yield

    def latest_change_revision(self, group: str, resource: str) -> int:
        with connection.cursor() as cur:
            cur.execute(
                'SELECT coalesce(max(resource_version), 0) FROM kapi_change WHERE "group" = %s AND resource = %s',
                [group, resource],
            )
            (revision,) = cur.fetchone()
        return int(revision)

    def keys(self, group: str, resources: list[str]) -> list[Key]:
        with connection.cursor() as cur:
            cur.execute(
                'SELECT resource, namespace, name FROM kapi_object WHERE "group" = %s AND resource = ANY(%s)',
                [group, list(resources)],
            )
            return [Key(group, resource, namespace, name) for resource, namespace, name in cur.fetchall()]

    def count_up_to(self, group: str, resource: str, limit: int) -> int:
        with connection.cursor() as cur:
            cur.execute(
                'SELECT count(*) FROM (SELECT 1 FROM kapi_object WHERE "group" = %s AND resource = %s'
                " LIMIT %s) AS found",
                [group, resource, limit],
            )
            (found,) = cur.fetchone()
        return int(found)

    def count_by_resource(self) -> dict[tuple[str, str], int]:
        with connection.cursor() as cur:
            cur.execute('SELECT "group", resource, count(*) FROM kapi_object GROUP BY 1, 2')
            return {(group, resource): int(n) for group, resource, n in cur.fetchall()}

    def change_log_size(self) -> int:
        with connection.cursor() as cur:
            cur.execute("SELECT count(*) FROM kapi_change")
            (rows,) = cur.fetchone()
        return int(rows)

    def change_stamp(self, group: str) -> tuple[int, int, int]:
        with connection.cursor() as cur:
            cur.execute(
                "SELECT coalesce(max(resource_version), 0), count(*), coalesce(sum(resource_version), 0)"
                ' FROM kapi_change WHERE "group" = %s',
                [group],
            )
            rev, rows, total = cur.fetchone()
        return int(rev), int(rows), int(total)

    def current_revision(self) -> int:
        with connection.cursor() as cur:
            cur.execute("SELECT kapi_rv_horizon()")
            (revision,) = cur.fetchone()
        return int(revision)

    def compacted_revision(self) -> int:
        with connection.cursor() as cur:
            cur.execute("SELECT revision FROM kapi_compaction WHERE id = 1")
            row = cur.fetchone()
        return int(row[0]) if row else 0

    def read_feed(
        self,
        consumer: str,
        limit: int,
        select: ChangeFilter | None = None,
        metadata_keys: tuple[str, ...] | None = None,
    ) -> FeedBatch:
        horizon = self.current_revision()
        with _cursor() as cur:
            cur.execute(_FEED_POSITION, [consumer])
            row = cur.fetchone()
        if row is None or row[0] < self.compacted_revision():
            return FeedBatch([], horizon, expired=True, new=row is None)
        if metadata_keys is None:
            metadata, params = _FEED_WHOLE_METADATA, [row[0], horizon]
        else:
            metadata, params = _FEED_SOME_METADATA, [list(metadata_keys), row[0], horizon]
        where = ""
        if select is not None:
            where = _FEED_FILTER
            params += [
                list(select.groups),
                [f"{group}/{resource}" for group, resource in select.resources],
                list(select.labels),
            ]
        with _cursor() as cur:
            cur.execute(_FEED_CHANGES.format(metadata=metadata, where=where), [*params, limit])
            rows = cur.fetchall()
        changes = [
            Change(rv, type_, Key(g, r, ns, n), uid, _loads(meta) or {}, _loads(status) or {}, req)
            for rv, g, r, ns, n, uid, type_, meta, status, req in rows
        ]
        end = changes[-1].revision if len(changes) == limit else horizon
        return FeedBatch(changes, end)

    def advance_feed(self, consumer: str, revision: int) -> None:
        with _cursor() as cur:
            cur.execute(_FEED_ADVANCE, [consumer, revision])

    def list(self, query: ListQuery) -> ListPage:
        rows, revision, last_key, remaining = self._page(query, _stamp)
        return ListPage(items=rows, revision=revision, last_key=last_key, remaining=remaining)

    def list_page_encoded(self, query: ListQuery) -> EncodedPage:
        """``list`` with each object parsed, stamped and encoded again on its
        own as its row streams in: a list the cache does not answer (a
        resource over its memory budget: 500,000 ConfigMaps) never holds its
        objects parsed, some thirty dicts and lists each, all at once."""
        rows, revision, last_key, remaining = self._page(query, _stamped_json)
        return EncodedPage(items=rows, revision=revision, last_key=last_key, remaining=remaining)

    def _page(self, query: ListQuery, make) -> tuple[list, int, tuple[str, str] | None, int | None]:
        """The page of ``query`` as ``make(data, resourceVersion)`` of each row,
        its revision, the key it ends at if more follow, and how many do."""
        if query.at_revision is None:
            revision = self.current_revision()
        else:
            revision = query.at_revision
            if revision < self.compacted_revision():
                raise ResourceVersionExpired(None, f"too old resource version: {revision}")
        sql, params = _list_sql(query, revision)
        limit = query.limit
        items: list = []
        append = items.append
        last = None
        more = False
        with connection.cursor() as cur, connection.wrap_database_errors:
            # The statement reads one row past ``limit``: its presence says more follow.
            for namespace, name, rv, data in cur.cursor.stream(sql, params, size=STREAM_ROWS):
                if limit is not None and len(items) == limit:
                    more = True
                    break
                append(make(data, rv))
                last = (namespace, name)
        if query.at_revision is not None and revision < self.compacted_revision():
            # Compaction committed between the check above and the read: the
            # rows read may lack history. The marker and the deletion commit
            # together, so checking again after the read is enough.
            raise ResourceVersionExpired(None, f"too old resource version: {revision}")
        last_key = last if more else None
        remaining = None
        if more and query.count_remaining:
            if query.remaining_before is not None and query.after is not None and query.at_revision is not None:
                remaining = max(0, query.remaining_before - len(items))
            else:
                remaining = self._count_after(query, revision, last_key)
        return items, revision, last_key, remaining

    def list_encoded(self, query: ListQuery) -> EncodedList:
        """``list`` for a cache that keeps what it reads (a whole collection,
        no ``limit``), in no order (the cache orders keys itself): no sort in
        PostgreSQL, which spills 10,000 ConfigMaps to disk and holds back the
        first row until it is done. The rows are streamed in chunks, so
        PostgreSQL encodes the next ones while this thread handles these, and
        each object is parsed, stamped and encoded again on its own: the
        objects are never all held parsed. 10,000 of them would be some
        300,000 dicts and lists, which the cyclic garbage collector walks
        again and again as they pile up."""
        if query.limit is not None or query.at_revision is not None:
            return super().list_encoded(query)
        revision = self.current_revision()
        sql, params = _list_sql(query, revision, ordered=False)
        items = []
        append = items.append
        with connection.cursor() as cur, connection.wrap_database_errors:
            for _namespace, _name, rv, data in cur.cursor.stream(sql, params, size=STREAM_ROWS):
                append(encoded_item(data, rv))
        return EncodedList(items, revision)

    def _count_after(self, query: ListQuery, revision: int, after: tuple[str, str]) -> int:
        counting = ListQuery(
            group=query.group,
            resource=query.resource,
            namespace=query.namespace,
            names=query.names,
            labels=query.labels,
            fields=query.fields,
            after=after,
        )
        sql, params = _list_sql(counting, revision, count=True)
        with connection.cursor() as cur:
            cur.execute(sql, params)
            (n,) = cur.fetchone()
        return int(n)


def _selection(query: ListQuery) -> tuple[list[str], list[Any]]:
    """The query's selectors as predicate templates (``kapi.storage.selection``)."""
    where: list[str] = []
    params: list[Any] = []
    for predicates, args in (
        selection.label_predicates(query.labels) if query.labels is not None else ([], []),
        selection.field_predicates(query.fields) if query.fields is not None else ([], []),
    ):
        where += predicates
        params += args
    return where, params


def _list_sql(
    query: ListQuery, revision: int, count: bool = False, ordered: bool = True
) -> tuple[str, list[Any]]:
    """One statement (one snapshot) listing the collection as it stood at
    ``revision``, by key unless not ``ordered``.

    Rows of ``kapi_object`` at or below ``revision`` have not changed since; keys
    written after it take their state at ``revision`` from the change log (the
    latest entry at or below it, unless that entry is a deletion): one probe
    of the change log's key index per key changed since, whatever the
    statistics say. (Planned as a join before the first autoanalyze, the
    history of every object was matched against every changed key: 6 s for a
    list of 10,000 new ConfigMaps.)
    """
    scope = ['"group" = %s', "resource = %s"]
    scope_params: list[Any] = [query.group, query.resource]
    if query.namespace is not None:
        scope.append("namespace = %s")
        scope_params.append(query.namespace)
    scope_sql = " AND ".join(scope)

    where, where_params = _selection(query)

    def filters(labels: str, data: str) -> tuple[str, list[Any]]:
        parts = [w.format(labels=labels, data=data) for w in where]
        params = list(where_params)
        if query.names is not None:
            parts.append("name = ANY(%s)")
            params.append(list(query.names))
        if query.after is not None:
            parts.append("(namespace, name) > (%s, %s)")
            params.extend(query.after)
        return (" AND " + " AND ".join(parts)) if parts else "", params

    current_filter, current_params = filters("labels", "data")
    past_filter, past_params = filters("COALESCE(data->'metadata'->'labels', '{}'::jsonb)", "data")

    history = f"""
WITH changed AS MATERIALIZED (
  SELECT DISTINCT namespace, name FROM kapi_change
  WHERE resource_version > %s AND {scope_sql}
),
past AS (
  SELECT changed.namespace, changed.name, c.resource_version, c.type, c.data
  FROM changed CROSS JOIN LATERAL (
    SELECT resource_version, type, data FROM kapi_change
    WHERE "group" = %s AND resource = %s AND namespace = changed.namespace
      AND name = changed.name AND resource_version <= %s
    ORDER BY resource_version DESC LIMIT 1
  ) c
)"""
    params: list[Any] = [revision, *scope_params, query.group, query.resource, revision]
    if count:
        # The rows as they are now (an index-only scan where the visibility
        # map allows), less those changed since ``revision``, plus those keys
        # as they stood then. Counting the rows at ``revision`` instead read
        # every remaining object for its resourceVersion: 730 ms per page of
        # a namespace of 500,000 ConfigMaps.
        sql = history + f"""
SELECT
  (SELECT count(*) FROM kapi_object WHERE {scope_sql}{current_filter})
  - (SELECT count(*) FROM kapi_object WHERE {scope_sql}{current_filter}
       AND (namespace, name) IN (SELECT namespace, name FROM changed))
  + (SELECT count(*) FROM past WHERE type <> 'DELETED'{past_filter})
"""
        params += [*scope_params, *current_params, *scope_params, *current_params, *past_params]
        return sql, params
    current = f"""SELECT namespace, name, resource_version, data FROM kapi_object
  WHERE {scope_sql} AND resource_version <= %s{current_filter}"""
    params += [*scope_params, revision, *current_params]
    paged = ordered and query.limit is not None
    if paged:
        # The page's first rows of the objects unchanged since ``revision``
        # (a walk of the key index that stops there), then the changed keys:
        # sorting the whole union first read and sorted every object of
        # the collection, 720 ms for a page of 500,000 ConfigMaps.
        current = f"({current}\n  ORDER BY namespace, name LIMIT %s)"
        params.append(query.limit + 1)
    sql = history + f""",
items AS (
  {current}
  UNION ALL
  SELECT namespace, name, resource_version, data FROM past
  WHERE type <> 'DELETED'{past_filter}
)
SELECT namespace, name, resource_version, data FROM items"""
    params += past_params
    if ordered:
        sql += " ORDER BY namespace, name"
    if query.limit is not None:
        sql += " LIMIT %s"
        params.append(query.limit + 1)
    return sql, params
