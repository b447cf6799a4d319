"""The HTTP side of watch: a chunked stream of newline-separated ``WatchEvent``s.

``serve_watch`` runs in the (synchronous) view: it plans the watch with
``kapi.handlers.watch.plan_watch`` (bad options are answered as plain HTTP
errors) and returns a ``StreamingHttpResponse`` over an ASYNC iterator, which
Django's ASGI handler drives on the event loop: no thread per watcher, one
chunk flushed per event. Encodings are shared: the first watcher to send a
change in a given form encodes it, the others reuse the bytes.

``as=Table`` / ``as=PartialObjectMetadata`` apply per event, as kube's watch
does; a Table carries its column definitions in the first event only
(kube's ``TableOptions.NoHeaders`` after the first object).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson
from django.db import connection
from django.http import StreamingHttpResponse

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


async def _frames(plan, registry: Registry, transform, include_object: str) -> AsyncIterator[bytes]:
    first = True
    tkey = (transform, include_object)
    async for event in stream(plan, registry):
        yield _encode(plan, event, transform, include_object, first, tkey)
        if event.type != "ERROR":
            first = False


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


def serve_watch(scope: RequestScope, registry: Registry, request) -> StreamingHttpResponse:
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
    response = StreamingHttpResponse(
        _frames(plan, registry, transform, include_object),
        content_type=output.content_type if "json" in output.content_type else "application/json",
        status=200,
    )
    response["Cache-Control"] = "no-cache, private"
    response["X-Accel-Buffering"] = "no"
    return response
