"""get and list."""

from __future__ import annotations

from kapi import errors
from kapi.handlers.cachedlist import encoded_list, list_from_cache, list_metadata
from kapi.handlers.continue_token import encode_continue
from kapi.handlers.listing import (
    decode_list_request,
    parse_resource_version,
    wait_for_revision,
)
from kapi.handlers.scope import RequestScope, Result
from kapi.registry.store import Registry

__all__ = ["get", "list_"]

_CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. "
    "You can start a new list without the continue parameter, or use the continue token "
    "in this response to retrieve the remainder of the results. Continuing with the "
    "provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show "
    "up in the list."
)


def get(scope: RequestScope, registry: Registry) -> Result:
    rt = scope.resource
    rv = scope.param("resourceVersion")
    if rv:
        revision = parse_resource_version(rv)
        if revision > 0:
            wait_for_revision(registry.storage, revision)
    return Result(200, registry.get(rt, scope.namespace or "", scope.name))


def list_(scope: RequestScope, registry: Registry, encoded: bool = False) -> Result:
    """``encoded``: the caller writes plain JSON, so a list from the cache may
    come as ``EncodedJSON`` bytes."""
    rt = scope.resource
    request = decode_list_request(rt, scope)
    cached = list_from_cache(scope, registry, request, encoded)
    if cached is not None:
        return cached
    options = request.options
    if options.min_revision is not None:
        wait_for_revision(registry.storage, options.min_revision)
    elif options.at_revision is not None and request.continue_token is None:
        # Exact at a version not reached yet: kube's "Too large resource version".
        wait_for_revision(registry.storage, options.at_revision)
    # Where the served form is the stored form and plain JSON is asked for,
    # the rows' JSON is served as it is, never all parsed at once.
    stored_json = encoded and registry.serves_stored_form(rt)
    try:
        if stored_json:
            page = registry.list_stored_json(rt, scope.namespace, options)
        else:
            listed = registry.list(rt, scope.namespace, options)
    except errors.StatusError as exc:
        if exc.code == 410 and request.continue_token:
            # kube hands out a token that goes on at the latest version (inconsistently).
            status = dict(exc.status)
            status["message"] = _CONTINUE_EXPIRED
            status["metadata"] = {"continue": encode_continue(-1, options.after)}
            raise errors.StatusError(status) from None
        if exc.code == 410 and options.at_revision is not None:
            raise errors.expired(f"too old resource version: {options.at_revision}") from None
        raise
    if stored_json:
        meta = list_metadata(page.revision, page.last_key, page.remaining)
        return Result(200, encoded_list(rt, meta, page.items))  # type: ignore[arg-type]
    meta = listed["metadata"]
    last_key = meta.pop("_last_key", None)
    if last_key is not None:
        meta["continue"] = encode_continue(int(meta["resourceVersion"]), last_key, meta.get("remainingItemCount"))
    return Result(200, listed)
