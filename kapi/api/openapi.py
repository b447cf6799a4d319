"""OpenAPI v3 (index and one document per group-version) and v2, from the catalog.

Each resource gets its paths with the operations it supports, tagged with
``x-kubernetes-group-version-kind`` and ``x-kubernetes-action`` and listing the
query parameters the server honours (kubectl checks for ``fieldValidation`` on
PATCH before relying on server-side validation). Schemas come from the
resource's strategy when it has one; otherwise an open object.
"""

from __future__ import annotations

import functools
import hashlib

import orjson

from kapi.api.crdopenapi import OBJECT_META, crd_schema
from kapi.registry.catalog import Catalog
from kapi.registry.definitions import (
    KUBERNETES_SCHEMA_VERSION,
    definition,
    referenced_names,
    to_openapi,
)
from kapi.registry.resource import ResourceType

__all__ = [
    "openapi_v2",
    "openapi_v2_protobuf",
    "openapi_v3_document",
    "openapi_v3_index",
    "schema_name",
]

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
    return {
        "name": name,
        "in": where,
        "schema": {"type": schema_type},
        "uniqueItems": True,
    }


def _op(rt: ResourceType, action: str, params: tuple[str, ...], ref: str) -> dict:
    return {
        "operationId": f"{action}{rt.kind}",
        "parameters": [_param(p) for p in params],
        "responses": {
            "200": {
                "description": "OK",
                "content": {"application/json": {"schema": {"$ref": ref}}},
            }
        },
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {
            "group": rt.group,
            "version": rt.version,
            "kind": rt.kind,
        },
    }


def _custom_schema(rt: ResourceType, prefix: str, v3: bool) -> dict:
    """A CRD version's schema as kube publishes it (``kapi.api.crdopenapi``)."""
    schema = rt.extra.get("crd_schema", rt.extra["openapi_schema"])
    return crd_schema(schema, prefix, v2=not v3)


def _schemas(types: list[ResourceType], prefix: str, v3: bool) -> dict:
    """Every schema the types need, keyed by definition name, in OpenAPI form."""
    roots = [rt.extra["schema_name"] for rt in types if rt.extra.get("schema_name")]
    roots.append("io.k8s.apimachinery.pkg.apis.meta.v1.Patch")
    if any("openapi_schema" in rt.extra for rt in types):
        roots.append(OBJECT_META)
    out = {
        name: to_openapi(definition(name), prefix, v3)
        for name in referenced_names(roots)
    }
    for rt in types:
        if "openapi_schema" in rt.extra:
            out[schema_name(rt)] = {
                **_custom_schema(rt, prefix, v3),
                "x-kubernetes-group-version-kind": _gvk(rt),
            }
        elif schema_name(rt) not in out:
            out[schema_name(rt)] = {
                "type": "object",
                "x-kubernetes-preserve-unknown-fields": True,
                "x-kubernetes-group-version-kind": _gvk(rt),
            }
    return out


_PATCH = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Patch"


def _patch_op(rt: ResourceType, ref: str) -> dict:
    """PATCH with the patch types it accepts: kubectl reads
    ``application/strategic-merge-patch+json`` here (built-in kinds only, as kube)."""
    op = _op(rt, "patch", _COMMON_WRITE_PARAMS + ("force",), ref)
    types = [
        "application/apply-patch+yaml",
        "application/json-patch+json",
        "application/merge-patch+json",
    ]
    if "crd" not in rt.extra:
        types.append("application/strategic-merge-patch+json")
    op["requestBody"] = {
        "content": {t: {"schema": {"$ref": _PATCH}} for t in types},
        "required": True,
    }
    return op


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
        collection["delete"] = _op(
            rt, "deletecollection", _LIST_PARAMS + ("dryRun",), ref
        )
    if rt.supports("get"):
        item["get"] = _op(rt, "get", ("pretty",), ref)
    if rt.supports("update"):
        item["put"] = _op(rt, "put", _COMMON_WRITE_PARAMS, ref)
    if rt.supports("patch"):
        item["patch"] = _patch_op(rt, ref)
    if rt.supports("delete"):
        item["delete"] = _op(
            rt,
            "delete",
            ("dryRun", "gracePeriodSeconds", "propagationPolicy", "pretty"),
            ref,
        )
    ns_param = [_param("namespace", "path")] if rt.namespaced else []
    collection["parameters"] = ns_param
    item["parameters"] = [*ns_param, _param("name", "path")]
    paths = {
        f"{prefix}/{rt.plural}": collection,
        f"{prefix}/{rt.plural}/{{name}}": item,
    }
    for sub in rt.subresources:
        sub_item: dict = {"parameters": item["parameters"]}
        if "get" in sub.verbs:
            sub_item["get"] = _op(rt, "get", ("pretty",), ref)
        if "update" in sub.verbs:
            sub_item["put"] = _op(rt, "put", _COMMON_WRITE_PARAMS, ref)
        if "patch" in sub.verbs:
            sub_item["patch"] = _patch_op(rt, ref)
        paths[f"{prefix}/{rt.plural}/{{name}}/{sub.name}"] = sub_item
    return paths


def _v3_document(catalog: Catalog, group: str, version: str) -> dict | None:
    if not catalog.has_group_version(group, version):
        return None
    paths: dict = {}
    types = catalog.resources(group, version)
    for rt in types:
        paths.update(_paths(rt))
    schemas = _schemas(types, "#/components/schemas/", True)
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": KUBERNETES_SCHEMA_VERSION},
        "paths": paths,
        "components": {"schemas": schemas},
    }


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


@functools.lru_cache(maxsize=256)
def _v3_cached(catalog: Catalog, group: str, version: str) -> tuple[dict | None, str]:
    doc = _v3_document(catalog, group, version)
    if doc is None:
        return None, ""
    digest = (
        hashlib.sha512(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS))
        .hexdigest()[:128]
        .upper()
    )
    return doc, digest


def openapi_v3_document(catalog: Catalog, group: str, version: str) -> dict | None:
    """The OpenAPI v3 document of one group-version (cached per catalog)."""
    return _v3_cached(catalog, group, version)[0]


def openapi_v3_index(catalog: Catalog) -> dict:
    paths = {}
    for group, versions in catalog.groups():
        for version in versions:
            _doc, digest = _v3_cached(catalog, group, version)
            path = _gv_path(group, version)
            paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest}"}
    return {"paths": paths}


@functools.lru_cache(maxsize=4)
def openapi_v2(catalog: Catalog) -> dict:
    """Swagger 2.0 with every definition the served types reach (cached per catalog)."""
    types = catalog.types()
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": KUBERNETES_SCHEMA_VERSION},
        "paths": {},
        "definitions": _schemas(types, "#/definitions/", False),
    }


@functools.lru_cache(maxsize=4)
def openapi_v2_protobuf(catalog: Catalog) -> bytes:
    """``openapi_v2`` as gnostic's ``openapi.v2.Document`` protobuf (cached per catalog)."""
    from kapi.protobuf.openapiv2 import encode_document

    return encode_document(openapi_v2(catalog))
