"""list from the process's list cache, as kube-apiserver lists from its cacher.

kube serves a list from its watch cache when any version will do
(``resourceVersion=0``) or when the cache is at least as new as asked
(``resourceVersionMatch=NotOlderThan``), and only without paging here: a
``limit`` or ``continue`` goes to the database, like a consistent list (unset
resourceVersion) and an ``Exact`` one, so continue tokens keep their meaning.
Selectors are matched against the stored form, as watches match them.

A plain JSON answer (no ``as=`` transform, no YAML, not pretty) is
:class:`EncodedJSON`: the cached encodings of the items joined, which the JSON
renderer writes as they are.
"""

from __future__ import annotations

import bisect

import orjson

from kapi.handlers.listing import ListRequest, parse_resource_version
from kapi.handlers.scope import RequestScope, Result
from kapi.registry.store import Registry
from kapi.storage import listcache
from kapi.storage.interface import ListQuery

__all__ = ["EncodedJSON", "cacheable", "list_from_cache"]


class EncodedJSON:
    """A response body already encoded as JSON (``data``, no trailing newline)."""

    __slots__ = ("data",)

    def __init__(self, data: bytes) -> None:
        self.data = data


def cacheable(request: ListRequest) -> int | None:
    """The revision the list must be at least as new as (0: any), if the
    cache may serve it; None if it must come from the database."""
    if request.watch or request.continue_token or request.options.limit is not None:
        return None
    if not listcache.enabled() or request.resource_version is None:
        return None
    if request.resource_version == "0":
        return 0
    if request.resource_version_match == "NotOlderThan":
        return parse_resource_version(request.resource_version)
    return None


def list_from_cache(
    scope: RequestScope, registry: Registry, request: ListRequest, min_revision: int, encoded: bool
) -> Result | None:
    """The list from memory, or None when the cache cannot answer it (not
    running, or older than ``min_revision``): then list from the database."""
    rt = scope.resource
    key = (rt.stored_group, rt.stored_resource, rt.api_version)

    def fill():
        return registry.storage.list(ListQuery(group=rt.stored_group, resource=rt.stored_resource))

    cache = listcache.list_cache()
    try:
        store = cache.current(key, fill)
    except (TimeoutError, RuntimeError):
        return None  # the event loop is stopping: the database answers instead
    if store is None:
        return None
    namespace = scope.namespace if rt.namespaced else None
    label_selector, field_selector = request.label_selector, request.field_selector
    selects_all = label_selector.empty and field_selector.empty

    def convert(stored):
        return registry.from_storage(rt, stored)

    with store.lock:
        revision = store.revision
        if revision < min_revision:
            return None
        keys = store.keys()
        if namespace is not None:
            # Keys are sorted by (namespace, name): the namespace's are one run.
            keys = keys[bisect.bisect_left(keys, (namespace,)) : bisect.bisect_left(keys, (namespace + "\0",))]
        parts: list[bytes] = []
        for ns_name in keys:
            entry = store.objects[ns_name]
            if not selects_all:
                meta = entry.stored.get("metadata") or {}
                if not (label_selector.matches(meta.get("labels") or {}) and field_selector.matches(entry.stored)):
                    continue
            parts.append(cache.encode(entry, convert))
    head = {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": {"resourceVersion": str(revision)}}
    if encoded:
        opening = orjson.dumps(head)[:-1]  # without its closing brace
        return Result(200, EncodedJSON(opening + b',"items":[' + b",".join(parts) + b"]}"))  # type: ignore[arg-type]
    head["items"] = [orjson.loads(part) for part in parts]
    return Result(200, head)
