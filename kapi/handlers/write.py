"""create, update (PUT), delete and deletecollection."""

from __future__ import annotations

from kapi import errors
from kapi.handlers.listing import decode_list_request
from kapi.handlers.options import create_options, delete_options, update_options
from kapi.handlers.scope import RequestScope, Result
from kapi.registry.store import Registry

__all__ = ["create", "delete", "delete_collection", "duplicate_fields", "update"]


def duplicate_fields(body) -> list[str]:
    """Duplicate keys the parser noted in the body (``kapi.api.parsers.Document``)."""
    return list(getattr(body, "duplicate_fields", ()) or ())


def _note_duplicates(options, body) -> None:
    """Put the body's duplicate keys, both ways of saying them, on ``options``."""
    options.duplicate_fields = duplicate_fields(body)
    options.yaml_duplicates = list(getattr(body, "yaml_duplicates", ()) or ())


def create(scope: RequestScope, registry: Registry, body) -> Result:
    rt = scope.resource
    options = create_options(scope)
    if scope.name:
        raise errors.method_not_supported(rt.group, rt.plural, "create")
    _note_duplicates(options, body)
    obj = registry.create(rt, scope.namespace or "", body, options)
    return Result(201, obj, warnings=list(options.warnings))


def update(scope: RequestScope, registry: Registry, body) -> Result:
    rt = scope.resource
    options = update_options(scope)
    _note_duplicates(options, body)
    obj, created = registry.update(rt, scope.namespace or "", scope.name, body, options)
    return Result(201 if created else 200, obj, warnings=list(options.warnings))


def _success_status(rt, obj: dict) -> dict:
    meta = obj.get("metadata") or {}
    details = {"name": meta.get("name", ""), "kind": rt.plural, "uid": meta.get("uid", "")}
    if rt.group:
        details["group"] = rt.group
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    }


def delete(scope: RequestScope, registry: Registry, body) -> Result:
    rt = scope.resource
    options = delete_options(scope, body)
    obj, deleted_now = registry.delete(rt, scope.namespace or "", scope.name, options)
    if not deleted_now or rt.plural == "namespaces" or rt.strategy.return_deleted_object:
        # Still there (finalizers): kube answers with the object as it now stands,
        # 202 only when the client asked for cascading with orphanDependents=false.
        return Result(202 if options.orphan_dependents is False and not deleted_now else 200, obj)
    return Result(200, _success_status(rt, obj), transformable=False)


def delete_collection(scope: RequestScope, registry: Registry, body) -> Result:
    rt = scope.resource
    if "deletecollection" not in rt.verbs:
        raise errors.method_not_allowed()
    options = delete_options(scope, body)
    request = decode_list_request(rt, scope)
    listed = registry.delete_collection(rt, scope.namespace, request.options, options)
    return Result(200, listed)
