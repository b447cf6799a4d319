"""OpenAPI v3 (index and one document per group-version) and v2, from the catalog.

Each resource gets its paths with the operations it supports, tagged with
``x-kubernetes-group-version-kind`` and ``x-kubernetes-action`` and listing the
query parameters the server honours (kubectl checks for ``fieldValidation`` on
PATCH before relying on server-side validation). Schemas come from the
resource's strategy when it has one; otherwise an open object.
"""

from __future__ import annotations

import hashlib

import orjson

from kapi.registry.catalog import Catalog
from kapi.registry.resource import ResourceType

__all__ = ["openapi_v2", "openapi_v3_document", "openapi_v3_index", "schema_name"]

_COMMON_WRITE_PARAMS = ("dryRun", "fieldManager", "fieldValidation", "pretty")
_LIST_PARAMS = (
    "allowWatchBookmarks",
    "continue",
    "fieldSelector",
    "labelSelector",
    "limit",
    "pretty",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "timeoutSeconds",
    "watch",
)


def _reverse_group(group: str) -> str:
    if not group:
        return "io.k8s.api.core"
    parts = group.split(".")
    if len(parts) == 1:
        return f"io.k8s.api.{group}"
    return ".".join(reversed(parts))


def schema_name(rt: ResourceType) -> str:
    """``io.k8s.api.core.v1.ConfigMap``-style definition names."""
    if rt.extra.get("schema_name"):
        return rt.extra["schema_name"]
    if not rt.group:
        return f"io.k8s.api.core.{rt.version}.{rt.kind}"
    if rt.group.endswith(".k8s.io") and rt.group.count(".") == 2:
        return f"io.k8s.api.{rt.group.split('.')[0]}.{rt.version}.{rt.kind}"
    return f"{_reverse_group(rt.group)}.{rt.version}.{rt.kind}"


def _gvk(rt: ResourceType) -> list[dict]:
    return [{"group": rt.group, "version": rt.version, "kind": rt.kind}]


def _param(name: str, where: str = "query", schema_type: str = "string") -> dict:
    return {"name": name, "in": where, "schema": {"type": schema_type}, "uniqueItems": True}


def _op(rt: ResourceType, action: str, params: tuple[str, ...], ref: str) -> dict:
    return {
        "operationId": f"{action}{rt.kind}",
        "parameters": [_param(p) for p in params],
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": ref}}}}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": rt.group, "version": rt.version, "kind": rt.kind},
    }


def _resource_schema(rt: ResourceType) -> dict:
    schema = rt.extra.get("openapi_schema")
    if schema is None:
        schema = {
            "type": "object",
            "description": f"{rt.kind} ({rt.api_version}).",
            "properties": {
                "apiVersion": {"type": "string"},
                "kind": {"type": "string"},
                "metadata": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
            "x-kubernetes-preserve-unknown-fields": True,
        }
    return {**schema, "x-kubernetes-group-version-kind": _gvk(rt)}


def _paths(rt: ResourceType) -> dict:
    base = f"/api/{rt.version}" if not rt.group else f"/apis/{rt.group}/{rt.version}"
    prefix = f"{base}/namespaces/{{namespace}}" if rt.namespaced else base
    ref = f"#/components/schemas/{schema_name(rt)}"
    collection: dict = {}
    item: dict = {}
    if rt.supports("list"):
        collection["get"] = _op(rt, "list", _LIST_PARAMS, ref)
    if rt.supports("create"):
        collection["post"] = _op(rt, "post", _COMMON_WRITE_PARAMS, ref)
    if rt.supports("deletecollection"):
        collection["delete"] = _op(rt, "deletecollection", _LIST_PARAMS + ("dryRun",), ref)
    if rt.supports("get"):
        item["get"] = _op(rt, "get", ("pretty",), ref)
    if rt.supports("update"):
        item["put"] = _op(rt, "put", _COMMON_WRITE_PARAMS, ref)
    if rt.supports("patch"):
        item["patch"] = _op(rt, "patch", _COMMON_WRITE_PARAMS + ("force",), ref)
    if rt.supports("delete"):
        item["delete"] = _op(rt, "delete", ("dryRun", "gracePeriodSeconds", "propagationPolicy", "pretty"), ref)
    ns_param = [_param("namespace", "path")] if rt.namespaced else []
    collection["parameters"] = ns_param
    item["parameters"] = [*ns_param, _param("name", "path")]
    paths = {f"{prefix}/{rt.plural}": collection, f"{prefix}/{rt.plural}/{{name}}": item}
    for sub in rt.subresources:
        sub_item: dict = {"parameters": item["parameters"]}
        if "get" in sub.verbs:
            sub_item["get"] = _op(rt, "get", ("pretty",), ref)
        if "update" in sub.verbs:
            sub_item["put"] = _op(rt, "put", _COMMON_WRITE_PARAMS, ref)
        if "patch" in sub.verbs:
            sub_item["patch"] = _op(rt, "patch", _COMMON_WRITE_PARAMS + ("force",), ref)
        paths[f"{prefix}/{rt.plural}/{{name}}/{sub.name}"] = sub_item
    return paths


def openapi_v3_document(catalog: Catalog, group: str, version: str) -> dict | None:
    if not catalog.has_group_version(group, version):
        return None
    paths: dict = {}
    schemas: dict = {}
    for rt in catalog.resources(group, version):
        paths.update(_paths(rt))
        schemas[schema_name(rt)] = _resource_schema(rt)
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.34.0"},
        "paths": paths,
        "components": {"schemas": schemas},
    }


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def openapi_v3_index(catalog: Catalog) -> dict:
    paths = {}
    for group, versions in catalog.groups():
        for version in versions:
            doc = openapi_v3_document(catalog, group, version)
            digest = hashlib.sha512(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)).hexdigest()[:64].upper()
            path = _gv_path(group, version)
            paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
    return {"paths": paths}


def openapi_v2(catalog: Catalog) -> dict:
    definitions = {}
    paths: dict = {}
    for rt in catalog.types():
        schema = _resource_schema(rt)
        definitions[schema_name(rt)] = {k: v for k, v in schema.items()}
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v1.34.0"},
        "paths": paths,
        "definitions": definitions,
    }
