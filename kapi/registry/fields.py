"""The registry's field hooks: field validation and managedFields on each write.

``check_fields`` drops fields the type's schema does not know and reports them
with the duplicate keys found while decoding (``fieldValidation``: ``Ignore``
silently, ``Warn`` as warnings, ``Strict`` as an error). ``manage_fields`` runs
the field manager for a create or update.
"""

from __future__ import annotations

import functools
from typing import Any

from kapi import errors
from kapi.fieldmanager import FieldManager
from kapi.registry.options import CreateOptions
from kapi.registry.resource import ResourceType
from kapi.schema import schema_for

__all__ = ["check_fields", "field_manager", "manage_fields"]

Object = dict[str, Any]


@functools.lru_cache(maxsize=512)
def _field_manager(rt: ResourceType, subresource: str) -> FieldManager:
    reset: frozenset[str] = frozenset()
    if subresource == "status":
        reset = frozenset({"spec"})
    elif getattr(rt.strategy, "status_subresource", False):
        reset = frozenset({"status"})
    return FieldManager(schema_for(rt), rt.api_version, subresource, reset)


def field_manager(rt: ResourceType, subresource: str = "") -> FieldManager:
    return _field_manager(rt, subresource)


def check_fields(
    rt: ResourceType, obj: Object, options: CreateOptions, strict_code: int = 400
) -> None:
    """Prunes unknown fields from ``obj`` (mutated) and reports them per
    ``options.field_validation``; ``strict_code`` is 400 for POST/PUT, 422 for PATCH."""
    schema = schema_for(rt)
    unknown = schema.unknown_fields(obj, prune=True) if schema is not None else []
    problems = [f'unknown field "{p}"' for p in unknown]
    problems += [f'duplicate field "{p}"' for p in options.duplicate_fields]
    if not problems or options.field_validation == "Ignore":
        return
    if options.field_validation == "Warn":
        options.warnings.extend(problems)
        return
    detail = "strict decoding error: " + ", ".join(problems)
    if strict_code == 400:
        raise errors.bad_request(
            f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {detail}'
        )
    raise errors.StatusError(errors.status_failure(strict_code, "Invalid", detail))


def manage_fields(
    rt: ResourceType, live: Object | None, new: Object, options: CreateOptions
) -> None:
    """Sets ``new``'s managedFields for a create (``live`` None) or update."""
    subresource = getattr(options, "subresource", "")
    field_manager(rt, subresource).update(live, new, options.field_manager)
