"""Reads for the admin pages, as the API serves them.

The statements live in storage (``kapi.storage.browse``, and ``Storage`` for
kind counts and namespace names); this module turns the admin's request
(sort names, opaque cursors, a label selector as typed) into those reads and
stored rows into objects in the version the page shows. A page costs a fixed
number of queries whatever it shows (no N+1).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

import orjson

from kapi.registry.resource import ResourceType
from kapi.selectors import parse_label_selector
from kapi.storage import browse, default_storage
from kapi.storage.browse import ChangeEntry

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
    "versions",
]

Object = dict[str, Any]

#: Sort keys offered on list pages: name order (by namespace, then name) or
#: change order (resourceVersion), each both ways: (storage order, descending).
SORTS = {
    "name": ("name", False),
    "-name": ("name", True),
    "updated": ("updated", False),
    "-updated": ("updated", True),
}

#: Namespaces offered in a list page's filter, at most.
NAMESPACE_CHOICES = 1000


def encode_cursor(values: tuple) -> str:
    return base64.urlsafe_b64encode(orjson.dumps(list(values))).decode().rstrip("=")


def decode_cursor(text: str) -> tuple | None:
    try:
        values = orjson.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    except (ValueError, TypeError):
        return None
    return tuple(values) if isinstance(values, list) else None


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
    order, descending = SORTS.get(request.sort, SORTS["name"])
    selector = request.label_selector
    stored = browse.browse(
        browse.BrowseQuery(
            group=rt.stored_group,
            resource=rt.stored_resource,
            namespace=request.namespace if rt.namespaced else None,
            search=request.search,
            labels=parse_label_selector(selector) if selector.strip() else None,
            order=order,
            descending=descending,
            after=request.after,
            before=request.before,
            limit=request.limit,
        )
    )
    rows = stored.rows
    page = ListPage(
        items=[rt.strategy.from_storage(row.object, rt.version) for row in rows],
        total=stored.total,
    )
    if not rows:
        return page
    first, last = encode_cursor(rows[0].key), encode_cursor(rows[-1].key)
    if request.before is not None and request.after is None:
        page.next_cursor = last
        page.prev_cursor = first if stored.more else None
    else:
        page.next_cursor = last if stored.more else None
        page.prev_cursor = first if request.after is not None else None
    return page


def kind_counts() -> dict[tuple[str, str], int]:
    """Objects per stored (group, resource), in one statement."""
    return default_storage().count_by_resource()


def namespaces(rt: ResourceType) -> list[str]:
    """The namespaces offered in the filter: every Namespace object (the first
    ``NAMESPACE_CHOICES`` by name)."""
    keys = default_storage().keys("", ["namespaces"])
    return sorted(k.name for k in keys)[:NAMESPACE_CHOICES]


def dependents(uid: str, namespace: str) -> list[tuple[str, str, str, str, Object]]:
    """Objects that name ``uid`` among their ownerReferences.

    Rows are (group, resource, namespace, name, metadata). Dependents live in
    the owner's namespace, or are cluster-scoped.
    """
    return [
        (d.group, d.resource, d.namespace, d.name, d.metadata)
        for d in browse.dependents(uid, namespace)
    ]


def related_events(uid: str, namespace: str, limit: int = 50) -> list[Object]:
    """Events about the object (``involvedObject.uid``), newest first."""
    return browse.newest_with_field(
        "", "events", namespace or "default", ("involvedObject", "uid"), uid, limit
    )


def history(uid: str, limit: int = 500) -> list[ChangeEntry]:
    """The object's entries in the change log, newest first, without their bodies."""
    return browse.history(uid, limit)


def versions(uid: str, resource_versions: list[int]) -> dict[int, ChangeEntry]:
    """Full change-log entries of the object at the given versions, in one statement."""
    return browse.changes_at(uid, resource_versions)
