"""A Sync's resource tree page (``kapi.admin.synctree``), read as the
signed-in user: RBAC decides which nodes appear."""

from __future__ import annotations

from urllib.parse import quote

from django.http import Http404
from django.shortcuts import render

from kapi.admin import access, gitops, rows, synctree
from kapi.admin.views.common import (
    CLUSTER,
    kind_url,
    object_url,
    resource_type,
    site_context,
    url_namespace,
)
from kapi.admin.views.detail import _get, sync_kind
from kapi.admin.views.live import live_context

__all__ = ["sync_object", "tree_page"]


def sync_object(request, group, version, plural, namespace, name):
    """(type, namespace, Sync) of a Sync URL the user may get; 404 for other kinds."""
    rt = resource_type(group, version, plural)
    if sync_kind(rt) != "Sync":
        raise Http404("not a Sync")
    ns = url_namespace(rt, namespace)
    access.require(request, "get", rt, ns, name)
    return rt, ns, _get(rt, ns, name)


def tree_page(request, group, version, plural, namespace, name):
    rt, ns, sync = sync_object(request, group, version, plural, namespace, name)
    stamp = live_context([])
    tree = synctree.build(sync, lambda t, n, m: access.allowed(request, "get", t, n, m))
    nodes = synctree.flatten(tree.roots)
    kinds: dict[int, str] = {}  # one reverse() per kind, not per node
    for node in nodes:
        if node.rt is not None and node.obj is not None:
            base = kinds.get(id(node.rt)) or kinds.setdefault(id(node.rt), kind_url(node.rt))
            node.url = f"{base}{quote(node.namespace if node.rt.namespaced and node.namespace else CLUSTER)}/{quote(node.name)}/"
        if node.rt is not None and node.state in ("in-sync", "drifted", "missing"):
            node.diff_url = object_url(rt, ns, name, "kapi_sync_diff") + f"?object={node.kind}/{node.namespace}/{node.name}"
    context = {
        "title": f"Sync {ns}/{name}: resource tree",
        "rt": rt,
        "namespace": ns,
        "name": name,
        "object_url": object_url(rt, ns, name),
        "kind_url": kind_url(rt),
        "revisions_url": object_url(rt, ns, name, "kapi_sync_revisions"),
        "diff_url": object_url(rt, ns, name, "kapi_sync_diff"),
        "row": gitops.summarize(sync, None),
        "tree": tree,
        "nodes": nodes,
        "rows": rows.tree_rows(nodes),
        **stamp,
        "live_namespaces": " ".join(sorted({ns} | {n.namespace for n in nodes if n.namespace})),
    }
    return render(request, "kapi_admin/sync_tree.html", site_context(request, context))
