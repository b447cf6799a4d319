"""watch: decode the options, plan the start, and produce the event stream.

The recipe (apiserver ``handlers/get.go`` ``ListResource`` with ``watch=true``,
``handlers/watch.go`` and the cacher's ``Watch``):

1. validate the options as kube's ``validateWatchOptions`` (422 naming the
   parameter), parse selectors and ``resourceVersion`` (400 when malformed);
2. plan where the stream starts, per the specification's table:

   ======================  ===================  ==================================
   resourceVersion         sendInitialEvents    start
   ======================  ===================  ==================================
   unset / ``"0"``         unset                synthetic ADDED for the state now,
                                                then changes after it
   ``N``                   unset / false        changes after N (410 if compacted)
   unset                   false                changes after the state now
   unset / ``"0"`` / N     true                 ADDED for a state not older than
                                                N, a BOOKMARK annotated
                                                ``k8s.io/initial-events-end``,
                                                then changes after it
   ======================  ===================  ==================================

3. stream (asynchronously, on the event loop, no thread per watcher) from the
   process's watch cache (``kapi.storage.watchcache``), catching up from the
   change log when the start is older than the cache, applying selectors with
   kube's transitions (starts matching → ADDED, stops → DELETED), sending
   BOOKMARKs every ``KAPI_WATCH_BOOKMARK_SECONDS`` and ending at the deadline
   from the injected :class:`TimeoutFactory` or at server shutdown.

Nothing here knows HTTP: ``kapi.api.watch`` encodes the events.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import close_old_connections, connection

from kapi import errors
from kapi.errors import Cause
from kapi.handlers.listing import (
    decode_list_request,
    parse_resource_version,
    wait_for_revision,
)
from kapi.handlers.options import invalid_options, parse_bool, parse_int
from kapi.handlers.scope import RequestScope
from kapi.observability import metrics
from kapi.registry.resource import ResourceType
from kapi.registry.store import Registry
from kapi.storage import default_storage
from kapi.storage.changes import ChangeEvent, fetch_changes
from kapi.storage.watchcache import Reader, WatchCache, watch_cache

log = logging.getLogger(__name__)

__all__ = [
    "INITIAL_EVENTS_END",
    "TimeoutFactory",
    "WatchEvent",
    "WatchPlan",
    "plan_watch",
    "stream",
]

#: The annotation on the bookmark that ends a streaming list's initial events.
INITIAL_EVENTS_END = "k8s.io/initial-events-end"
_CATCH_UP_PAGE = 1000


def _bookmark_interval() -> float:
    return float(os.environ.get("KAPI_WATCH_BOOKMARK_SECONDS", "60"))


class TimeoutFactory:
    """When a watch ends (apiserver ``handlers/watch.go`` ``TimeoutFactory``).

    ``timeoutSeconds`` if given; otherwise a random time between
    ``min_request_timeout`` and twice that (kube: 30-60 minutes), so that
    watches spread over the servers again after a change. ``clock`` and
    ``rand`` are injectable for tests.
    """

    def __init__(
        self,
        clock: Callable[[], float] = time.monotonic,
        rand: Callable[[], float] = random.random,
        min_request_timeout: float | None = None,
    ) -> None:
        self.clock = clock
        self.rand = rand
        if min_request_timeout is None:
            min_request_timeout = float(os.environ.get("KAPI_MIN_REQUEST_TIMEOUT_SECONDS", "1800"))
        self.min_request_timeout = min_request_timeout

    def deadline(self, timeout_seconds: int | None) -> float:
        if timeout_seconds is not None and timeout_seconds > 0:
            return self.clock() + timeout_seconds
        return self.clock() + self.min_request_timeout * (1.0 + self.rand())


@dataclass
class WatchEvent:
    """One event to send. ``object`` is the served form (or a ``Status`` for
    ERROR). ``memo``/``key`` let the encoder share one encoding between all the
    watchers that send the same change the same way; ``more`` marks an event
    of a burst that is not its last."""

    type: str
    object: dict
    memo: dict | None = None
    key: tuple = ()
    #: Another event follows at once (no wait in between): an encoder may
    #: hold this one and send both in one write.
    more: bool = False


@dataclass
class WatchPlan:
    """Everything decided before streaming starts (synchronously, with the
    database at hand)."""

    rt: ResourceType
    namespace: str | None
    label_selector: Any
    field_selector: Any
    start_revision: int
    deadline: float
    allow_bookmarks: bool
    initial: list[dict] = field(default_factory=list)
    initial_end_bookmark: bool = False
    error: dict | None = None
    timeouts: TimeoutFactory = field(default_factory=TimeoutFactory)

    @property
    def selects_all(self) -> bool:
        return self.label_selector.empty and self.field_selector.empty

    def matches(self, obj: dict) -> bool:
        """Selectors against the STORED form (field paths are storage paths)."""
        meta = obj.get("metadata") or {}
        return self.label_selector.matches(meta.get("labels") or {}) and self.field_selector.matches(obj)


def _validate(scope: RequestScope) -> None:
    """kube's ``validateWatchOptions``: 422 Invalid naming the parameter."""
    match = scope.param("resourceVersionMatch") or ""
    send_initial = parse_bool(scope, "sendInitialEvents")
    causes: list[Cause] = []
    if send_initial is not None and match != "NotOlderThan":
        causes.append(
            Cause(
                "FieldValueForbidden",
                "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                "resourceVersionMatch",
            )
        )
    if match:
        if send_initial is None:
            causes.append(
                Cause(
                    "FieldValueForbidden",
                    "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                    "resourceVersionMatch",
                )
            )
        if match != "NotOlderThan":
            causes.append(
                Cause(
                    "FieldValueNotSupported",
                    f'Unsupported value: "{match}": supported values: "NotOlderThan"',
                    "resourceVersionMatch",
                )
            )
        if scope.param("continue"):
            causes.append(
                Cause(
                    "FieldValueForbidden",
                    "Forbidden: resourceVersionMatch is forbidden when continue is provided",
                    "resourceVersionMatch",
                )
            )
    if causes:
        raise invalid_options("ListOptions", causes)


def _too_old(revision: int, compacted: int) -> dict:
    return errors.expired(f"too old resource version: {revision} ({compacted})").status


def _compacted(registry: Registry) -> int:
    return registry.storage.compacted_revision()


def plan_watch(
    scope: RequestScope, registry: Registry, timeouts: TimeoutFactory | None = None
) -> WatchPlan:
    """Validate and plan a watch; reads the initial state if the stream starts
    with one. Raises ``StatusError`` for bad options (answered as HTTP errors);
    failures after that (too old, too large) become an ERROR event, as kube."""
    rt = scope.resource
    timeouts = timeouts or TimeoutFactory()
    _validate(scope)
    request = decode_list_request(rt, scope)
    send_initial = parse_bool(scope, "sendInitialEvents")
    allow_bookmarks = bool(parse_bool(scope, "allowWatchBookmarks"))
    timeout_seconds = parse_int(scope, "timeoutSeconds")
    rv = request.resource_version
    revision = parse_resource_version(rv) if rv is not None else 0
    plan = WatchPlan(
        rt=rt,
        namespace=scope.namespace if rt.namespaced else None,
        label_selector=request.label_selector,
        field_selector=request.field_selector,
        start_revision=revision,
        deadline=timeouts.deadline(timeout_seconds),
        allow_bookmarks=allow_bookmarks,
        timeouts=timeouts,
    )
    with_state = send_initial is True or (send_initial is None and revision == 0)
    if not with_state:
        if revision == 0:  # sendInitialEvents=false without a version: from now
            plan.start_revision = registry.storage.current_revision()
            return plan
        compacted = _compacted(registry)
        if revision < compacted:
            plan.error = _too_old(revision, compacted)
        return plan
    try:
        if send_initial and revision > 0:
            wait_for_revision(registry.storage, revision)
        request.options.at_revision = None
        listed = registry.list(rt, scope.namespace, request.options)
    except errors.StatusError as exc:
        plan.error = exc.status
        return plan
    plan.start_revision = int(listed["metadata"]["resourceVersion"])
    plan.initial = listed["items"]
    plan.initial_end_bookmark = bool(send_initial) and allow_bookmarks
    return plan


def _bookmark(rt: ResourceType, revision: int, annotations: dict | None = None) -> WatchEvent:
    meta: dict[str, Any] = {"resourceVersion": str(revision)}
    if annotations:
        meta["annotations"] = annotations
    return WatchEvent("BOOKMARK", {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta})


def _catch_up(
    plan: WatchPlan, after: int, upto: int
) -> tuple[list[ChangeEvent], int | None]:
    """Change events of the plan's resource in ``(after, upto]`` from the
    database (in a worker thread); also the compacted revision if ``after``
    is below it (then the events cannot be trusted)."""
    try:
        events = fetch_changes(
            after,
            upto,
            group=plan.rt.stored_group,
            resource=plan.rt.stored_resource,
            namespace=plan.namespace,
            limit=_CATCH_UP_PAGE,
        )
        compacted = default_storage().compacted_revision()
        return events, (compacted if after < compacted else None)
    finally:
        connection.close()
        close_old_connections()


class _Converter:
    """Stored change → served WatchEvent, with selector transitions."""

    def __init__(self, plan: WatchPlan, registry: Registry) -> None:
        self.plan = plan
        self.registry = registry
        rt = plan.rt
        self.rt_key = (rt.group, rt.version, rt.plural)

    def convert(self, event: ChangeEvent) -> WatchEvent | None:
        plan = self.plan
        if plan.namespace is not None and event.namespace != plan.namespace:
            return None
        if plan.selects_all:
            kind, previous = event.type, event.type == "DELETED"
        else:
            now = event.type != "DELETED" and plan.matches(event.object)
            before = event.prev is not None and plan.matches(event.prev)
            if now:
                kind, previous = ("MODIFIED" if before else "ADDED"), False
            elif before:
                kind, previous = "DELETED", True
            else:
                return None
        key = (self.rt_key, kind)
        cached = event.memo.get(key)
        if cached is None:
            stored = event.stored(previous)
            cached = event.memo[key] = self.registry.from_storage(plan.rt, stored)
        return WatchEvent(kind, cached, event.memo, key)


async def stream(
    plan: WatchPlan,
    registry: Registry,
    cache: WatchCache | None = None,
    on_stalled: Callable[[], None] | None = None,
) -> AsyncIterator[WatchEvent]:
    """The events of one watch, until its deadline, overflow or shutdown.

    A watcher more than the channel's capacity behind is ended and counted in
    ``apiserver_terminated_watchers``; if that happens while its consumer is
    stuck (the client does not read), ``on_stalled`` is called to end it from
    outside (the HTTP layer closes the connection).
    """
    clock = plan.timeouts.clock
    if plan.error is not None:
        yield WatchEvent("ERROR", plan.error)
        return
    for item in plan.initial:
        yield WatchEvent("ADDED", item)
    plan.initial = []
    if plan.initial_end_bookmark:
        yield _bookmark(plan.rt, plan.start_revision, {INITIAL_EVENTS_END: "true"})

    cache = cache or watch_cache()
    await cache.start()
    channel = cache.channel(plan.rt.stored_group, plan.rt.stored_resource)
    convert = _Converter(plan, registry).convert
    after = plan.start_revision
    position: int | None = None
    interval = _bookmark_interval()
    next_bookmark = clock() + interval
    final_sent = False  # kube also sends one 2 s before the deadline
    cache.stats["watchers"] += 1
    group, resource = plan.rt.stored_group, plan.rt.stored_resource
    longrunning = metrics.LONGRUNNING_REQUESTS.labels(
        "WATCH", group, plan.rt.version, resource, "namespace" if plan.namespace is not None else "cluster"
    )
    dispatched = metrics.WATCH_CACHE_EVENTS_DISPATCHED.labels(group, resource)

    def overflowed(stalled: bool) -> None:
        cache.stats["overflows"] += 1
        metrics.TERMINATED_WATCHERS.labels(group, resource).inc()
        if stalled and on_stalled is not None:
            try:
                on_stalled()
            except Exception:
                log.warning("kapi: could not end a stalled watcher", exc_info=True)

    reader = Reader(overflowed)
    channel.readers.add(reader)
    longrunning.inc()
    try:
        while not cache.stopping and clock() < plan.deadline:
            if position is None:
                position = channel.position_after(after)
            if position is None:
                # Older than the cache: read (after, floor] from the change log.
                upto = channel.floor
                events, compacted = await asyncio.to_thread(_catch_up, plan, after, upto)
                if compacted is not None:
                    yield WatchEvent("ERROR", _too_old(after, compacted))
                    return
                for event in events:
                    out = convert(event)
                    after = event.revision
                    if out is not None:
                        yield out
                if len(events) < _CATCH_UP_PAGE:
                    after = max(after, upto)
                continue
            events = channel.since(position)
            if events is None:
                reader.overflow(stalled=False)
                return  # too slow: the client re-watches from its last version
            position += len(events)
            reader.position = position
            batch = []
            for event in events:
                if event.revision <= after:
                    continue
                after = event.revision
                out = convert(event)
                if out is not None:
                    batch.append(out)
            if batch:
                dispatched.inc(len(batch))
                for out in batch[:-1]:
                    out.more = True
                for out in batch:
                    yield out
            now = clock()
            caught_up = position == channel.end
            due = next_bookmark if final_sent else min(next_bookmark, plan.deadline - 2.0)
            if plan.allow_bookmarks and caught_up and now >= due:
                # Every change up to cache.revision is in the channel and consumed.
                after = max(after, cache.revision)
                yield _bookmark(plan.rt, after)
                final_sent = final_sent or now >= plan.deadline - 2.0
                next_bookmark = now + interval
                continue
            if caught_up:
                wake = min(plan.deadline, due) if plan.allow_bookmarks else plan.deadline
                reader.waiting = True
                try:
                    await channel.wait(max(0.0, wake - now))
                finally:
                    reader.waiting = False
    finally:
        channel.readers.discard(reader)
        cache.stats["watchers"] -= 1
        longrunning.dec()
