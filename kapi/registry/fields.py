"""The registry's field hooks: field validation and managedFields on each write.

``check_fields`` drops fields the type's schema does not know and reports them
with the duplicate keys found while decoding (``fieldValidation``: ``Ignore``
silently, ``Warn`` as warnings, ``Strict`` as an error). ``check_applied_fields``
is apply's variant: kube's field manager refuses any field its schema does not
declare whatever ``fieldValidation`` says (``.spec.foo: field not declared in
schema``), then the strict YAML decoding reports duplicate keys by line.
``manage_fields`` runs the field manager for a create or update.
"""

from __future__ import annotations

import functools
from typing import Any

from kapi import errors
from kapi.fieldmanager import FieldManager
from kapi.registry.options import CreateOptions
from kapi.registry.resource import ResourceType
from kapi.schema import TypeSchema, builtin_definitions, schema_for

__all__ = ["check_applied_fields", "check_fields", "field_manager", "manage_fields"]

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
    unknown = _unknown_fields(rt, obj, prune=True)
    problems = [f'unknown field "{p}"' for p in unknown]
    if options.yaml_duplicates:
        # kube's YAML serializer: the decoder's error first, unknown fields sorted.
        problems.sort()
        if options.field_validation == "Warn":
            problems[:0] = options.yaml_duplicates
        else:
            problems.insert(0, _yaml_errors(options.yaml_duplicates))
    else:
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


_OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


@functools.cache
def _object_meta() -> TypeSchema:
    defs = builtin_definitions()
    return TypeSchema(defs[_OBJECT_META], defs)


def _unknown_fields(rt: ResourceType, obj: Object, prune: bool = False) -> list[str]:
    """Paths of the fields of ``obj`` its type does not declare (removed with
    ``prune``). A custom resource's schema keeps ``metadata`` open; kube decodes
    it as an ObjectMeta all the same, so its unknown fields count too."""
    schema = schema_for(rt)
    if schema is None:
        return []
    unknown = schema.unknown_fields(obj, prune=prune)
    meta = obj.get("metadata")
    if "crd" in rt.extra and isinstance(meta, dict):
        unknown[:0] = _object_meta().unknown_fields(meta, "metadata", prune=prune)
    return unknown


def _yaml_errors(lines: list[str]) -> str:
    return "yaml: unmarshal errors:\n  " + "\n  ".join(lines)


def check_applied_fields(
    rt: ResourceType, config: Object, options: CreateOptions
) -> None:
    """Refuses an applied configuration with fields the type's schema does not
    declare (400, kube's typed-patch error; kube 1.28 answers it with a 500,
    fixed upstream to 400), then reports duplicate keys per ``fieldValidation``
    as kube's strict YAML decoding words them. Does not mutate ``config``."""
    unknown = _unknown_fields(rt, config)
    if unknown:
        meta = config.get("metadata") or {}
        group, _, version = rt.api_version.rpartition("/")
        where = f"{meta.get('namespace', '')}/{meta.get('name', '')}; {group}/{version}, Kind={rt.kind}"
        found = [f".{path}: field not declared in schema" for path in unknown]
        detail = found[0] if len(found) == 1 else "errors:\n  " + "\n  ".join(found)
        raise errors.bad_request(
            f"failed to create typed patch object ({where}): {detail}"
        )
    duplicates = options.yaml_duplicates or [
        f'duplicate field "{p}"' for p in options.duplicate_fields
    ]
    if not duplicates or options.field_validation == "Ignore":
        return
    if options.field_validation == "Warn":
        options.warnings.extend(duplicates)
        return
    raise errors.bad_request(
        "error strict decoding YAML: error converting YAML to JSON: "
        + _yaml_errors(duplicates)
    )


def manage_fields(
    rt: ResourceType, live: Object | None, new: Object, options: CreateOptions
) -> None:
    """Sets ``new``'s managedFields for a create (``live`` None) or update."""
    subresource = getattr(options, "subresource", "")
    field_manager(rt, subresource).update(live, new, options.field_manager)
