"""The HTTP side of watch: a chunked stream of newline-separated ``WatchEvent``s.

``serve_watch`` runs in the (synchronous) view: it plans the watch with
``kapi.handlers.watch.plan_watch`` (bad options are answered as plain HTTP
errors) and returns a ``WatchStreamResponse`` over an ASYNC iterator, whose
frames ``kapi.api.streaming`` sends on the event loop: no thread per watcher,
one chunk flushed per event. Encodings are shared: the first watcher to send a
change in a given form encodes it, the others reuse the bytes.

``as=Table`` / ``as=PartialObjectMetadata`` apply per event, as kube's watch
does; a Table carries its column definitions in the first event only
(kube's ``TableOptions.NoHeaders`` after the first object).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import orjson
from django.db import connection

from kapi.api.connection import closer as connection_closer
from kapi.api.streaming import WatchStreamResponse
from kapi.api.transforms import partial_object_metadata, to_table
from kapi.handlers.scope import RequestScope
from kapi.handlers.watch import WatchEvent, plan_watch, stream
from kapi.registry.store import Registry

__all__ = ["encode_event", "serve_watch"]


def _transform(plan, obj: dict, transform, include_object: str, first: bool) -> dict:
    if transform is None:
        return obj
    as_, _group, version = transform
    if as_ == "Table":
        table = to_table(plan.rt, obj, include_object or "Metadata", version)
        if not first:
            table["columnDefinitions"] = None
        return table
    if as_ in ("PartialObjectMetadata", "PartialObjectMetadataList"):
        return partial_object_metadata(obj, version)
    return obj


def encode_event(event_type: str, obj: dict) -> bytes:
    return orjson.dumps({"type": event_type, "object": obj}) + b"\n"


#: How often (at most) a watch re-checks that its user may still watch.
PERMISSION_RECHECK_SECONDS = 1.0


def _permission(scope: RequestScope):
    """A check that the watch's user may still watch, or None when there is
    nothing to re-check (in-process users; ``system:masters``, whom the
    authorizer always allows)."""
    from kapi.auth import access
    from kapi.auth.attributes import Attributes
    from kapi.auth.user import SYSTEM_MASTERS, UserInfo

    user = scope.user
    if not isinstance(user, UserInfo) or SYSTEM_MASTERS in user.groups:
        return None
    rt = scope.resource
    namespace = (scope.namespace or "") if rt.namespaced else ""
    attrs = Attributes(user, "watch", True, namespace, rt.group, rt.version, rt.plural, "", scope.name)

    def allowed() -> bool:
        try:
            return access.allowed(attrs)
        finally:
            connection.close()  # this runs on an executor thread: give its connection back

    return _SharedCheck(attrs, allowed)


class _SharedCheck:
    """A permission re-check shared by every watch with the same attributes.

    1,000 watches of one user re-checking every second were 1,000 executor
    hops a second, each landing right when an event woke them all. Now a
    check's answer is reused by the watches that ask within half a recheck
    interval of its start, so they cost one hop (and a revocation still ends
    every watch within 1.5 rechecks)."""

    _recent: dict = {}  # attrs -> (started, loop, future)

    def __init__(self, attrs, check) -> None:
        self.attrs = attrs
        self.check = check

    async def __call__(self) -> bool:
        loop = asyncio.get_running_loop()
        now = time.monotonic()
        try:
            entry = self._recent.get(self.attrs)
        except TypeError:  # unhashable attributes: check alone
            return await asyncio.to_thread(self.check)
        if entry is None or entry[1] is not loop or now - entry[0] >= PERMISSION_RECHECK_SECONDS / 2:
            if len(self._recent) > 4096:
                self._recent.clear()
            entry = (now, loop, asyncio.ensure_future(asyncio.to_thread(self.check)))
            self._recent[self.attrs] = entry
        return await asyncio.shield(entry[2])


async def _frames(
    plan, registry: Registry, transform, include_object: str, permitted=None
) -> AsyncIterator[bytes]:
    first = True
    pending: list[bytes] = []
    tkey = (transform, include_object)
    checked = time.monotonic()
    async for event in stream(plan, registry, on_stalled=connection_closer()):
        if permitted is not None and time.monotonic() - checked >= PERMISSION_RECHECK_SECONDS:
            # RBAC changed under the watch: once the user may no longer watch,
            # nothing more is sent and the stream ends.
            checked = time.monotonic()
            if not await permitted():
                return
        frame = _encode(plan, event, transform, include_object, first, tkey)
        if event.type != "ERROR":
            first = False
        if event.more:
            # A watcher that was behind gets its burst in one write (one TLS
            # record, one syscall) instead of one per event.
            pending.append(frame)
            continue
        if pending:
            pending.append(frame)
            frame = b"".join(pending)
            pending = []
        yield frame


def _encode(plan, event: WatchEvent, transform, include_object, first: bool, tkey) -> bytes:
    if event.type == "ERROR":
        return encode_event("ERROR", event.object)
    if event.type == "BOOKMARK" and transform is not None:
        # A bookmark stays a bare object with a version (what clients look for).
        return encode_event("BOOKMARK", event.object)
    shareable = event.memo is not None and not (first and transform is not None)
    if shareable:
        key = (event.key, tkey)
        data = event.memo.get(key)
        if data is None:
            data = event.memo[key] = encode_event(
                event.type, _transform(plan, event.object, transform, include_object, False)
            )
        return data
    return encode_event(event.type, _transform(plan, event.object, transform, include_object, first))


def serve_watch(scope: RequestScope, registry: Registry, request) -> WatchStreamResponse:
    try:
        plan = plan_watch(scope, registry)
    finally:
        # Django would keep the pooled connection until the response closes,
        # i.e. for the life of the watch: give it back now.
        connection.close()
    output = request.kapi_output
    transform = output.transform
    include_object = request.GET.get("includeObject") or ""
    if include_object not in ("", "None", "Object", "Metadata"):
        from kapi import errors

        raise errors.bad_request(
            f'includeObject: Unsupported value: "{include_object}": supported values: "None", "Metadata", "Object"'
        )
    response = WatchStreamResponse(
        _frames(plan, registry, transform, include_object, _permission(scope)),
        content_type=output.content_type if "json" in output.content_type else "application/json",
        status=200,
    )
    response["Cache-Control"] = "no-cache, private"
    response["X-Accel-Buffering"] = "no"
    return response
