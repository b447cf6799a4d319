"""list from the process's list cache, as kube-apiserver lists from its cacher.

Which lists memory answers, and at what revision (kube 1.34's cacher, with
KEP-2340 "consistent reads from cache" and KEP-4988 "snapshottable cache"):

- a **consistent** list (no resourceVersion) without selectors: the current
  revision is read from the database (the horizon, one cheap statement), and
  the cache answers once it has read that far, waiting at most
  ``CONSISTENT_WAIT_SECONDS``; otherwise the database answers, as before
  (counted in ``apiserver_watch_cache_consistent_read_total``). With a label or
  field selector the database answers: its indexes select faster than a scan;
- ``resourceVersion=0``, and ``NotOlderThan`` N the cache is new enough for:
  the cache as it is, selectors matched against the stored form as watches
  match them;
- a ``limit``: the first page is read from a snapshot of the store at its
  revision (``kapi.storage.listsnapshot``), kept for the pages after it;
- a ``continue`` token (or a paged ``Exact`` N) at a revision this process
  has a snapshot of, or that its store still is (nothing of the resource
  changed since, as when another process made the token): the next page from
  memory; otherwise the database answers at that revision (410 once
  compacted), the same collection. An unpaged ``Exact`` list reads the database.

A page of a resource whose store is big and not filled yet starts the fill in
the background and is answered by the database meanwhile
(``kapi.storage.listcache``); a whole list fills the store in the request, as
it costs the database about as much.

A plain JSON answer (no ``as=`` transform, no YAML, not pretty) is
:class:`EncodedJSON`: the cached encodings of the items joined, which the JSON
renderer writes as they are.
"""

from __future__ import annotations

import os

import orjson

from kapi.handlers.continue_token import encode_continue
from kapi.handlers.listing import ListRequest
from kapi.handlers.scope import RequestScope, Result
from kapi.observability import metrics
from kapi.registry.store import Registry
from kapi.storage import listcache
from kapi.storage.interface import ListQuery
from kapi.storage.listsnapshot import Page, Snapshot

__all__ = ["CONSISTENT_WAIT_SECONDS", "EncodedJSON", "encoded_list", "list_from_cache", "list_metadata"]

#: How long a consistent list waits for this process's cache to catch up with
#: the database before the database answers instead (kube: 3 s).
#: ``KAPI_LIST_CONSISTENT_WAIT_SECONDS`` overrides it (tests that prove the
#: fallback set it shorter, so as not to sit out the whole wait).
CONSISTENT_WAIT_SECONDS = float(os.environ.get("KAPI_LIST_CONSISTENT_WAIT_SECONDS", "3"))


class EncodedJSON:
    """A response body already encoded as JSON, with the newline kube ends
    its answers with (``line``)."""

    __slots__ = ("line",)

    def __init__(self, line: bytes) -> None:
        self.line = line


def list_from_cache(scope: RequestScope, registry: Registry, request: ListRequest, encoded: bool) -> Result | None:
    """The list from memory, or None when the database must answer it."""
    if request.watch or not listcache.enabled():
        return None
    snapshot = _snapshot(scope, registry, request)
    if snapshot is None:
        return None
    options = request.options
    # A page read at revision N reports N, also from a snapshot that covers
    # more revisions than N (the collection did not change in between).
    revision = options.at_revision or snapshot.revision
    rt = scope.resource
    matches = listcache.entry_matcher(request.label_selector, request.field_selector)
    namespace = scope.namespace if rt.namespaced else None
    page = snapshot.page(namespace, options.after, options.limit, matches, options.count_remaining)
    return _respond(scope, registry, revision, page, encoded)


def _key(scope: RequestScope) -> listcache.Key:
    """One store per served form: a custom resource's changes when its CRD
    changes the defaults applied on read."""
    rt = scope.resource
    conversion = rt.strategy.conversion_key(rt.version)
    served = f"{rt.api_version}#{conversion}" if conversion else rt.api_version
    return (rt.stored_group, rt.stored_resource, served)


def list_metadata(revision: int, last_key: tuple[str, str] | None, remaining: int | None) -> dict:
    """A list's ``metadata``: its revision and, when more follow, the token
    that goes on after ``last_key`` and how many remain (if counted)."""
    meta: dict = {"resourceVersion": str(revision)}
    if last_key is not None:
        meta["continue"] = encode_continue(revision, last_key, remaining)
        if remaining is not None:
            meta["remainingItemCount"] = remaining
    return meta


def encoded_list(rt, meta: dict, parts: list[bytes]) -> EncodedJSON:
    """A ``<Kind>List`` of the items' JSON ``parts``, in kube's key order.

    The body is made in one allocation: the opening joins the first part and
    the closing the last, so that a list of 500,000 ConfigMaps (720 MB) is
    not copied once more for each piece added around it."""
    head = {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta}
    opening = orjson.dumps(head)[:-1] + b',"items":['  # the head without its closing brace
    if not parts:
        return EncodedJSON(opening + b"]}\n")
    pieces = list(parts)  # pointers only: the caller's list may be shared
    pieces[0] = opening + pieces[0]
    pieces[-1] = pieces[-1] + b"]}\n"
    return EncodedJSON(b",".join(pieces))


def _snapshot(scope: RequestScope, registry: Registry, request: ListRequest) -> Snapshot | None:
    """The snapshot the list reads, by the rules in the module docstring."""
    cache = listcache.list_cache()
    key = _key(scope)
    options = request.options
    if request.continue_token or options.at_revision is not None:
        revision = options.at_revision
        if revision is None or options.limit is None:
            return None  # a token of an expired continuation, or an unpaged Exact list
        snapshot = cache.snapshots.get(key, revision) or _current_at(scope, registry, revision)
        if snapshot is None or revision < registry.storage.compacted_revision():
            # Compacted: the database says 410, as it did before snapshots
            # (the watch cache's idea of compaction may be a poll behind).
            return None
        return snapshot

    fill = _filler(scope, registry)
    # A page (``limit``) is cheap in the database: while a big store fills in
    # the background, the database answers it. A whole list costs the database
    # about what the fill costs, so it fills the store itself and answers from
    # it. Either way the store is filled only if it fits the process's budget
    # (``listcache.MAX_OBJECTS``), counted first.
    size = _sizer(scope, registry)
    background = options.limit is not None
    rt = scope.resource
    try:
        if request.resource_version is None:
            if options.label_selector is not None or options.field_selector is not None:
                return None
            horizon = registry.storage.current_revision()
            store = cache.current_at_least(key, fill, horizon, CONSISTENT_WAIT_SECONDS, size, background)
            metrics.WATCH_CACHE_CONSISTENT_READ.labels(
                rt.plural, "true", "false" if store is not None else "true"
            ).inc()
        else:
            store = cache.current(key, fill, size, background)
            if store is not None and store.revision < (options.min_revision or 0):
                store = None  # older than asked: the database waits for it
    except (TimeoutError, RuntimeError):
        return None  # the event loop is stopping: the database answers instead
    if store is None:
        return None
    with store.lock:
        snapshot = store.snapshot()
    if options.limit is not None:
        cache.snapshots.put(key, snapshot)
    return snapshot


def _filler(scope: RequestScope, registry: Registry):
    rt = scope.resource

    def fill():
        return registry.storage.list_encoded(ListQuery(group=rt.stored_group, resource=rt.stored_resource))

    return fill


def _sizer(scope: RequestScope, registry: Registry):
    """How many objects a fill would read, counted up to a bound."""
    rt = scope.resource

    def size(at_most: int) -> int:
        return registry.storage.count_up_to(rt.stored_group, rt.stored_resource, at_most)

    return size


def _current_at(scope: RequestScope, registry: Registry, revision: int) -> Snapshot | None:
    """This process's store, if it is also the collection at ``revision``
    (nothing of the resource changed since): a token made by another
    process, or whose snapshot was evicted, while the resource stood still."""
    cache = listcache.list_cache()
    key = _key(scope)
    if not cache.filled(key):
        return None  # not worth a fill: the database answers one page cheaper
    try:
        store = cache.current(key, _filler(scope, registry))
    except (TimeoutError, RuntimeError):
        return None
    if store is None:
        return None
    with store.lock:
        snapshot = store.snapshot()
    return snapshot if snapshot.covers(revision) else None


def _respond(scope: RequestScope, registry: Registry, revision: int, page: Page, encoded: bool) -> Result:
    rt = scope.resource

    convert = None
    if not registry.serves_stored_form(rt):

        def convert(stored):
            return registry.from_storage(rt, stored)

    encode = listcache.ListCache.encode
    parts = [encode(entry, convert) for entry in page.entries]
    meta = list_metadata(revision, page.last_key, page.remaining)
    if encoded:
        return Result(200, encoded_list(rt, meta, parts))  # type: ignore[arg-type]
    head = {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta}
    head["items"] = [orjson.loads(part) for part in parts]
    return Result(200, head)
