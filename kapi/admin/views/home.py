"""The GitOps home, the first page after sign-in: every Sync the signed-in
user may list, as tiles, filtered by namespace, state and text.

RBAC decides which Syncs are shown (``kapi.admin.access``): a user who may
list Syncs only in ``team-a`` sees only ``team-a``'s. The kind tables the
admin opened with before are one click away (``kinds/``).
"""

from __future__ import annotations

from django.shortcuts import render
from django.urls import reverse

from kapi.admin import access, gitops
from kapi.admin.rows import tiles
from kapi.admin.views.common import object_url, site_context
from kapi.admin.views.live import live_context

__all__ = ["home", "sync_types"]


def sync_types():
    """(Sync type, GitRepository type), each None when not served."""
    from kapi.admin.views.syncs import _sync_types

    found = {rt.kind: rt for rt in _sync_types()}
    return found.get("Sync"), found.get("GitRepository")


def _matches(row: gitops.SyncRow, text: str) -> bool:
    text = text.lower()
    return any(text in value.lower() for value in (
        row.name, row.namespace, row.source, row.source_url, row.commit_message, row.author,
        row.sha, row.failure, row.target))


def home(request):
    sync_rt, repo_rt = sync_types()
    q = request.GET
    namespace, state, text = q.get("namespace", ""), q.get("state", ""), q.get("q", "").strip()
    context = {
        "title": "GitOps",
        "kinds_url": reverse("admin:kapi_kinds"),
        "filters": {"namespace": namespace, "state": state, "q": text},
        "states": gitops.STATES,
        "served": sync_rt is not None,
    }
    if sync_rt is None:
        return render(request, "kapi_admin/home.html", site_context(request, context))
    readable = access.readable_namespaces(request, sync_rt)
    # Before the Syncs are read: a change after this makes the page stale.
    stamp = live_context([], [f"{t.stored_group}/{t.stored_resource}" for t in (sync_rt, repo_rt) if t])
    if namespace:
        shown = [namespace] if readable is None or namespace in readable else []
    else:
        shown = readable
    # The GitRepositories' commit messages are shown where the user may read them.
    repo_spaces = access.readable_namespaces(request, repo_rt) if repo_rt is not None else []
    rows = gitops.sync_rows(sync_rt, repo_rt, shown, repo_spaces) if shown != [] else []
    counts = {s: 0 for s in gitops.STATES}
    for row in rows:
        counts[row.state] = counts.get(row.state, 0) + 1
    visible = [r for r in rows if (not state or r.state == state) and (not text or _matches(r, text))]
    for row in visible:
        row.url = object_url(sync_rt, row.namespace, row.name)
        row.tree_url = object_url(sync_rt, row.namespace, row.name, "kapi_sync_tree")
    context.update(
        rows=visible,
        tiles=tiles(visible),
        total=len(rows),
        counts=counts,
        namespaces=sorted({r.namespace for r in rows} | ({namespace} if namespace else set()))
        if readable is not None else _all_namespaces(),
        limited=readable is not None,
        sync_rt=sync_rt,
        **{**stamp, "live_namespaces": " ".join(sorted({r.namespace for r in rows} | {r.target for r in rows}))},
    )
    return render(request, "kapi_admin/home.html", site_context(request, context))


def _all_namespaces() -> list[str]:
    from kapi.storage import default_storage

    return sorted(k.name for k in default_storage().keys("", ["namespaces"]))
