"""The HTTP side of watch: a chunked stream of newline-separated ``WatchEvent``s.

``serve_watch`` runs in the (synchronous) view: it plans the watch with
``kapi.handlers.watch.plan_watch`` (bad options are answered as plain HTTP
errors) and returns a ``WatchStreamResponse`` over an ASYNC iterator, whose
frames ``kapi.api.streaming`` sends on the event loop: no thread per watcher,
one chunk flushed per event. Encodings are shared: the first watcher to send a
change in a given form encodes it, the others reuse the bytes.

Before each event, the watch's ``kapi.auth.revocation.Guard`` confirms that
its caller may still see it (on an authentication and RBAC state at least as
new as the event); once not, the stream ends with nothing more sent.

``as=Table`` / ``as=PartialObjectMetadata`` apply per event, as kube's watch
does; a Table carries its column definitions in the first event only
(kube's ``TableOptions.NoHeaders`` after the first object).

With ``application/vnd.kubernetes.protobuf`` the stream is
``;stream=watch``: each frame is a 4-byte big-endian length and a
``WatchEvent`` whose object is the protobuf-encoded object (magic included),
as kube's protobuf stream serializer and ``LengthDelimitedFramer`` write it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson
from django.db import connection

from kapi.api.connection import closer as connection_closer
from kapi.api.renderers import dump_protobuf
from kapi.api.streaming import WatchStreamResponse
from kapi.api.transforms import partial_object_metadata, to_table
from kapi.handlers.scope import RequestScope
from kapi.handlers.watch import WatchEvent, plan_watch, stream
from kapi.protobuf.encode import encode_watch_event
from kapi.registry.store import Registry

__all__ = ["encode_event", "encode_protobuf_event", "serve_watch"]


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


def encode_protobuf_event(event_type: str, obj: dict) -> bytes:
    body, code = dump_protobuf(obj)
    if code is not None:
        # An object that cannot be encoded ends nothing but itself: the watcher
        # gets the ERROR event kube's watch encoder would report.
        event_type = "ERROR"
    return encode_watch_event(event_type, body)


def _credentials(scope: RequestScope, request):
    """What the watch was allowed with, to re-check it as RBAC and identities
    change (``kapi.auth.revocation``); None for in-process users (the git
    sync's own reads), which no revocation applies to."""
    from kapi.auth.revocation import Credentials
    from kapi.auth.user import UserInfo

    raw = getattr(request, "_request", request)
    attrs = getattr(raw, "kapi_attrs", None)
    requester = getattr(raw, "kapi_user", None)
    if not isinstance(scope.user, UserInfo) or attrs is None or not isinstance(requester, UserInfo):
        return None
    token = getattr(request, "auth", None)
    return Credentials.of(requester, token if isinstance(token, str) else None, raw.META, attrs)


async def _frames(
    plan, registry: Registry, transform, include_object: str, creds=None, encoding: str = "json"
) -> AsyncIterator[bytes]:
    first = True
    pending: list[bytes] = []
    encode = encode_protobuf_event if encoding == "protobuf" else encode_event
    tkey = (transform, include_object, encoding)
    guard = None
    if creds is not None:
        from kapi.auth import revocation
        from kapi.storage.watchcache import watch_cache

        cache = watch_cache()
        await cache.start()
        guard = revocation.Guard(revocation.monitor(cache), creds)
        # The request was authorized on an index up to 0.25 s old: check
        # again on one at least as new as the initial events.
        if not await guard.allowed():
            return
    async for event in stream(plan, registry, on_stalled=connection_closer()):
        if guard is not None and not guard.unchanged() and not await guard.allowed():
            # A permission went (RBAC, the token, the user) no later than this
            # event: nothing more is sent, and the stream ends.
            return
        frame = _encode(plan, event, transform, include_object, first, tkey, encode)
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


def _encode(plan, event: WatchEvent, transform, include_object, first: bool, tkey, encode=encode_event) -> bytes:
    if event.type == "ERROR":
        return encode("ERROR", event.object)
    if event.type == "BOOKMARK" and transform is not None:
        if encode is encode_protobuf_event:
            # Protobuf has a message for PartialObjectMetadata, not for every
            # kind (a custom resource): the bookmark is transformed too, as kube's.
            return encode("BOOKMARK", partial_object_metadata(event.object, transform[2]))
        # A bookmark stays a bare object with a version (what clients look for).
        return encode("BOOKMARK", event.object)
    shareable = event.memo is not None and not (first and transform is not None)
    if shareable:
        key = (event.key, tkey)
        data = event.memo.get(key)
        if data is None:
            data = event.memo[key] = encode(
                event.type, _transform(plan, event.object, transform, include_object, False)
            )
        return data
    return encode(event.type, _transform(plan, event.object, transform, include_object, first))


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
    if output.encoding == "protobuf":
        content_type = output.content_type.split(";")[0] + ";stream=watch"
    elif "json" in output.content_type:
        content_type = output.content_type
    else:
        content_type = "application/json"
    response = WatchStreamResponse(
        _frames(
            plan, registry, transform, include_object, _credentials(scope, request), output.encoding
        ),
        content_type=content_type,
        status=200,
    )
    response["Cache-Control"] = "no-cache, private"
    response["X-Accel-Buffering"] = "no"
    return response
