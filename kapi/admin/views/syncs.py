"""GitRepositories and Syncs (group ``sync.kapi.dev``): list, panel, actions.

The pages serve whatever the catalog holds: until the sync kinds are served,
the list says so. "Reconcile now" sets the annotation ``sync.kapi.dev/requestedAt``
"Suspend/Resume" flips ``spec.suspend``, and "Roll back to this" on a
``status.history`` entry sets the pin annotation (``sync.history``; "Unpin"
removes it), all through the registry.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.contrib import messages
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.http import require_POST

from kapi.admin import queries
from kapi.admin.views.common import (
    FIELD_MANAGER,
    object_url,
    require_edit,
    resource_type,
    site_context,
    url_namespace,
)
from kapi.admin.views.detail import SYNC_GROUP, sync_kind
from kapi.errors import StatusError
from kapi.registry.catalog import catalog
from kapi.registry.options import UpdateOptions
from kapi.registry.store import Registry

__all__ = ["REQUESTED_AT", "reconcile", "rollback", "summary", "suspend", "sync_list", "sync_panel"]

REQUESTED_AT = "sync.kapi.dev/requestedAt"
LIST_LIMIT = 500


def _sync_types():
    """The served GitRepository and Sync types (preferred version first)."""
    found = {}
    for group, versions in catalog().groups():
        if group != SYNC_GROUP:
            continue
        for version in versions:
            for rt in catalog().resources(group, version):
                if rt.kind in ("GitRepository", "Sync"):
                    found.setdefault(rt.kind, rt)
    return [found[k] for k in ("GitRepository", "Sync") if k in found]


def summary(obj: dict) -> dict:
    """Ready state, revision, last error and counts of a GitRepository or Sync."""
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    conditions = {c.get("type"): c for c in status.get("conditions") or [] if isinstance(c, dict)}
    ready = conditions.get("Ready") or {}
    artifact = status.get("artifact") if isinstance(status.get("artifact"), dict) else {}
    revision = artifact.get("revision") or status.get("lastAppliedRevision") or ""
    commit = artifact.get("commit") if isinstance(artifact.get("commit"), dict) else {}
    return {
        "ready": ready.get("status", "Unknown"),
        "reason": ready.get("reason", ""),
        "message": ready.get("message", ""),
        "error": ready.get("message", "") if ready.get("status") == "False" else "",
        "revision": revision,
        "commit_message": commit.get("message") or artifact.get("message") or "",
        "author": commit.get("author") or artifact.get("author") or "",
        # When the revision came: none when nothing was applied yet (the Ready
        # condition's transition time is not a revision's).
        "time": (artifact.get("lastUpdateTime") or ready.get("lastTransitionTime") or "") if revision else "",
        "counts": {
            k: status[k]
            for k in ("applied", "unchanged", "pruned")
            if isinstance(status.get(k), int)
        }
        or (status.get("counts") if isinstance(status.get("counts"), dict) else {}),
        "suspended": bool((obj.get("spec") or {}).get("suspend")),
        # A Sync applying to another API server (spec.kubeConfig): where, and its version.
        "target": (status.get("target") or {}).get("server", "") if isinstance(status.get("target"), dict) else "",
        "target_version": (status.get("target") or {}).get("version", "")
        if isinstance(status.get("target"), dict) else "",
    }


def sync_list(request):
    from kapi.admin import access
    from kapi.storage import gitopsreads

    sections = []
    for rt in _sync_types():
        readable = access.readable_namespaces(request, rt)
        stored = gitopsreads.in_namespaces(rt.stored_group, rt.stored_resource, readable, LIST_LIMIT)
        page = queries.ListPage(items=[rt.strategy.from_storage(s.object, rt.version) for s in stored],
                                total=len(stored))
        rows = []
        for obj in page.items:
            meta = obj["metadata"]
            rows.append(
                {
                    "namespace": meta.get("namespace", ""),
                    "name": meta["name"],
                    "url": object_url(rt, meta.get("namespace", ""), meta["name"]),
                    **summary(obj),
                }
            )
        sections.append({"rt": rt, "rows": rows, "total": page.total})
    context = {"title": "Syncs", "sections": sections, "sync_group": SYNC_GROUP}
    return render(request, "kapi_admin/syncs.html", site_context(request, context))


def sync_panel(rt, obj: dict) -> dict:
    """The extra context of a Sync's object page: inventory links and actions."""
    from kapi.admin.views.common import served_type

    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    inventory = []
    entries = (status.get("inventory") or {}).get("entries") if isinstance(status.get("inventory"), dict) else None
    for entry in entries or []:
        # id is "<namespace>_<name>_<group>_<kind>", v the version.
        parts = str(entry.get("id", "")).split("_")
        if len(parts) < 4:
            continue
        ns, name, group, kind = parts[0], "_".join(parts[1:-2]), parts[-2], parts[-1]
        api_version = f"{group}/{entry.get('v', '')}" if group else entry.get("v", "")
        irt = served_type(api_version, kind)
        inventory.append(
            {
                "kind": kind,
                "namespace": ns,
                "name": name,
                "url": object_url(irt, ns if irt.namespaced else "", name) if irt else "",
            }
        )
    meta = obj["metadata"]
    ns = meta.get("namespace", "")
    current = status.get("lastAppliedRevision") or ""
    history = [
        {**entry, "sha": str(entry.get("revision", "")).rsplit("sha1:", 1)[-1],
         "current": entry.get("revision") == current}
        for entry in status.get("history") or [] if isinstance(entry, dict)
    ]
    pin = status.get("pin") if isinstance(status.get("pin"), dict) else None
    return {
        "sync": summary(obj),
        "inventory": inventory,
        "history": history,
        "pin": pin,
        "rollback_url": object_url(rt, ns, meta["name"], "kapi_rollback"),
        "tree_url": object_url(rt, ns, meta["name"], "kapi_sync_tree"),
        "revisions_url": object_url(rt, ns, meta["name"], "kapi_sync_revisions"),
        "reconcile_url": object_url(rt, ns, meta["name"], "kapi_reconcile"),
        "suspend_url": object_url(rt, ns, meta["name"], "kapi_suspend"),
    }


def _act(request, group, version, plural, namespace, name, mutate, done: str):
    rt = resource_type(group, version, plural)
    if sync_kind(rt) != "Sync":
        raise Http404("not a Sync")
    ns = url_namespace(rt, namespace)
    require_edit(request, "update", rt, ns, name)
    try:
        Registry().update_with(rt, ns, name, mutate, UpdateOptions(field_manager=FIELD_MANAGER))
    except StatusError as exc:
        messages.error(request, f"{exc.status.get('reason', '')}: {exc.status.get('message', '')}")
    else:
        messages.success(request, done)
    return HttpResponseRedirect(object_url(rt, ns, name))


@require_POST
def reconcile(request, group, version, plural, namespace, name):
    def mutate(obj: dict) -> dict:
        annotations = obj["metadata"].setdefault("annotations", {})
        annotations[REQUESTED_AT] = datetime.now(UTC).isoformat()
        return obj

    return _act(request, group, version, plural, namespace, name, mutate,
                f"Reconcile of Sync {name} requested.")


@require_POST
def rollback(request, group, version, plural, namespace, name):
    """Pin the Sync to the history entry's commit (``revision``), or unpin it."""
    from sync.history import PIN_ANNOTATION

    revision = str(request.POST.get("revision") or "").strip().lower()
    if revision and (len(revision) < 7 or any(c not in "0123456789abcdef" for c in revision)):
        raise Http404("not a commit")

    def mutate(obj: dict) -> dict:
        annotations = obj["metadata"].setdefault("annotations", {})
        if revision:
            annotations[PIN_ANNOTATION] = revision
        else:
            annotations.pop(PIN_ANNOTATION, None)
        annotations[REQUESTED_AT] = datetime.now(UTC).isoformat()
        return obj

    done = f"Sync {name} pinned to {revision[:12]}." if revision else f"Sync {name} unpinned."
    return _act(request, group, version, plural, namespace, name, mutate, done)


@require_POST
def suspend(request, group, version, plural, namespace, name):
    resume = request.POST.get("resume") == "1"

    def mutate(obj: dict) -> dict:
        obj.setdefault("spec", {})["suspend"] = not resume
        return obj

    return _act(request, group, version, plural, namespace, name, mutate,
                f"Sync {name} {'resumed' if resume else 'suspended'}.")
