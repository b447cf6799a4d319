"""Browsing: API groups and kinds (as discovery lists them), then objects of a kind."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.shortcuts import render
from django.utils.http import urlencode

from kapi.admin import access, queries
from kapi.admin.views.common import kind_url, object_url, resource_type, site_context
from kapi.registry.catalog import catalog
from kapi.selectors import SelectorError

__all__ = ["groups_context", "kind_list"]

PAGE_SIZE = 50


def groups_context(request=None) -> dict:
    """Every served group with its kinds (preferred version) and object counts
    (counted only where the user may list the kind everywhere: "–" otherwise)."""
    counts = queries.kind_counts()
    groups = []
    for group, versions in catalog().groups():
        kinds = []
        for rt in catalog().resources(group, versions[0]):
            everywhere = request is None or access.allowed(request, "list", rt)
            kinds.append(
                {
                    "rt": rt,
                    "url": kind_url(rt),
                    "count": counts.get((rt.stored_group, rt.stored_resource), 0) if everywhere else "–",
                }
            )
        groups.append({"name": group or "core", "versions": versions, "kinds": kinds})
    return {"kapi_groups": groups}


def kind_list(request, group: str, version: str, plural: str):
    rt = resource_type(group, version, plural)
    q = request.GET
    readable = access.readable_namespaces(request, rt)
    namespace = q.get("namespace") or None
    if readable is not None:
        # Limited to some namespaces: one of them at a time, the first by default.
        if not readable or (namespace and namespace not in readable):
            access.require(request, "list", rt, namespace or "")
            raise PermissionDenied  # pragma: no cover - require raised
        namespace = namespace or readable[0]
    req = queries.ListRequest(
        namespace=namespace,
        search=q.get("q", "").strip(),
        label_selector=q.get("labels", "").strip(),
        sort=q.get("sort") if q.get("sort") in queries.SORTS else "name",
        after=queries.decode_cursor(q["after"]) if q.get("after") else None,
        before=queries.decode_cursor(q["before"]) if q.get("before") else None,
        limit=PAGE_SIZE,
    )
    error = ""
    try:
        page = queries.list_page(rt, req)
    except SelectorError as exc:
        error = f"Label selector: {exc}"
        page = queries.ListPage()

    columns = [c for c in rt.strategy.table_definition() if c.get("priority", 0) == 0]
    all_namespaces = rt.namespaced and not req.namespace
    rows = []
    for obj in page.items:
        meta = obj.get("metadata") or {}
        ns = meta.get("namespace", "")
        cells = [c for c, col in zip(rt.strategy.table_row_cells(obj), rt.strategy.table_definition(), strict=True)
                 if col.get("priority", 0) == 0]
        rows.append(
            {
                "url": object_url(rt, ns, meta.get("name", "")),
                "namespace": ns,
                "cells": cells,
                "deleting": "deletionTimestamp" in meta,
            }
        )

    keep = {k: v for k, v in q.items() if k in ("namespace", "q", "labels", "sort") and v}

    def link(**extra) -> str:
        return "?" + urlencode({**keep, **extra})

    def sort_link(key: str) -> str:
        flip = {"name": "-name", "-name": "name", "updated": "-updated", "-updated": "updated"}
        target = flip[req.sort] if req.sort.lstrip("-") == key else key
        params = {k: v for k, v in keep.items() if k != "sort"}
        return "?" + urlencode({**params, "sort": target})

    context = {
        "title": f"{rt.kind} ({rt.plural}.{rt.group or 'core'}/{rt.version})",
        "rt": rt,
        "columns": columns,
        "all_namespaces": all_namespaces,
        "rows": rows,
        "page": page,
        "error": error,
        "namespaces": (queries.namespaces(rt) if readable is None else readable) if rt.namespaced else [],
        "filters": req,
        "next_url": link(after=page.next_cursor) if page.next_cursor else "",
        "prev_url": link(before=page.prev_cursor) if page.prev_cursor else "",
        "first_url": link() if (req.after or req.before) else "",
        "sort_name_url": sort_link("name"),
        "sort_updated_url": sort_link("updated"),
        "sort": req.sort,
        "create_url": kind_url(rt) + "create/",
    }
    return render(request, "kapi_admin/kind_list.html", site_context(request, context))

