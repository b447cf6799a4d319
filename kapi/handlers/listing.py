"""List options: selectors, paging and resourceVersion semantics for list and watch.

resourceVersion rules follow the specification's table for list:
unset → most recent; ``"0"`` → any (this process's cache as it is); N with
``NotOlderThan`` (or unset match, no limit) → at least N; N with ``Exact``, or
with a ``limit`` and no match → the collection as it stood at N. Invalid combinations answer 422 naming the
parameter (kube's ``ValidateListOptions``), malformed values 400. Which of
these memory answers, and which PostgreSQL, is ``kapi.handlers.cachedlist``'s
decision.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from kapi import errors
from kapi.errors import Cause
from kapi.handlers.continue_token import decode_continue
from kapi.handlers.options import invalid_options, parse_bool, parse_int
from kapi.handlers.scope import RequestScope
from kapi.registry.options import ListOptions
from kapi.registry.resource import ResourceType
from kapi.selectors import SelectorError, parse_field_selector, parse_label_selector
from kapi.storage import Storage

__all__ = ["ListRequest", "decode_list_request", "parse_resource_version", "wait_for_revision"]

#: How long a read waits for a resourceVersion newer than the horizon (kube: 3 s).
TOO_LARGE_WAIT_SECONDS = 3.0


@dataclass
class ListRequest:
    options: ListOptions
    label_selector: object
    field_selector: object
    resource_version: str | None
    resource_version_match: str | None
    continue_token: str | None
    watch: bool
    continue_revision: int | None = None


def parse_resource_version(value: str) -> int:
    try:
        revision = int(value)
    except ValueError:
        raise errors.bad_request(f'invalid resource version "{value}"') from None
    if revision < 0:
        raise errors.bad_request(f'invalid resource version "{value}"')
    return revision


def wait_for_revision(storage: Storage, revision: int) -> int:
    """Wait until the horizon reaches ``revision``; 504 "Too large resource version"."""
    deadline = time.monotonic() + TOO_LARGE_WAIT_SECONDS
    current = storage.current_revision()
    while current < revision:
        if time.monotonic() > deadline:
            raise errors.StatusError(
                errors.status_failure(
                    504,
                    "Timeout",
                    f"Too large resource version: {revision}, current: {current}",
                    {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}], "retryAfterSeconds": 1},
                ),
                headers={"Retry-After": "1"},
            )
        time.sleep(0.05)
        current = storage.current_revision()
    return current


def _selectors(rt: ResourceType, scope: RequestScope, options: ListOptions):
    label_text = scope.param("labelSelector") or ""
    field_text = scope.param("fieldSelector") or ""
    try:
        label_selector = parse_label_selector(label_text)
    except SelectorError as exc:
        raise errors.bad_request(f"unable to parse requirement: {exc}" if "unable to parse" not in str(exc) else str(exc)) from None
    supported = {f: rt.strategy.storage_field(f) for f in rt.selectable_fields}
    try:
        field_selector = parse_field_selector(
            field_text, supported, dict(rt.field_defaults)
        )
    except SelectorError as exc:
        raise errors.bad_request(str(exc)) from None
    options.label_selector = None if label_selector.empty else label_selector
    options.field_selector = None if field_selector.empty else field_selector
    return label_selector, field_selector


def decode_list_request(rt: ResourceType, scope: RequestScope) -> ListRequest:
    watch = bool(parse_bool(scope, "watch"))
    rv = scope.param("resourceVersion")
    rv = rv if rv != "" else None
    match = scope.param("resourceVersionMatch") or None
    token = scope.param("continue") or None
    limit = parse_int(scope, "limit")

    if not watch:
        causes: list[Cause] = []
        if match is not None:
            if rv is None:
                causes.append(Cause("FieldValueForbidden", "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided", "resourceVersionMatch"))
            if token:
                causes.append(Cause("FieldValueForbidden", "Forbidden: resourceVersionMatch is forbidden when continue is provided", "resourceVersionMatch"))
            if match not in ("Exact", "NotOlderThan"):
                causes.append(Cause("FieldValueNotSupported", f'Unsupported value: "{match}": supported values: "Exact", "NotOlderThan", ""', "resourceVersionMatch"))
            if match == "Exact" and rv == "0":
                causes.append(Cause("FieldValueForbidden", 'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"', "resourceVersionMatch"))
        if scope.has("sendInitialEvents"):
            causes.append(Cause("FieldValueForbidden", "Forbidden: sendInitialEvents is forbidden for list", "sendInitialEvents"))
        if causes:
            raise invalid_options("ListOptions", causes)

    options = ListOptions()
    label_selector, field_selector = _selectors(rt, scope, options)
    request = ListRequest(options, label_selector, field_selector, rv, match, token, watch)
    if watch:
        return request

    if limit is not None and limit > 0:
        options.limit = limit
        options.count_remaining = label_selector.empty and field_selector.empty
    if token:
        if rv is not None and rv != "0":
            raise errors.bad_request("specifying resource version is not allowed when using continue")
        revision, after, remaining = decode_continue(token)
        options.after = after
        request.continue_revision = revision
        if revision > 0:
            options.at_revision = revision
            if options.count_remaining:
                options.remaining_before = remaining
    elif rv is not None and rv != "0":
        revision = parse_resource_version(rv)
        if match == "Exact" or (match is None and options.limit is not None):
            # The table's second row: a limit without a match makes N Exact
            # (kube's etcd3 getList reads at N when the list has a limit).
            options.at_revision = revision
        else:
            options.min_revision = revision
    elif rv is not None:
        parse_resource_version(rv)
    return request
