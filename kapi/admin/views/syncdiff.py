"""A Sync's revisions and diffs: desired (a revision's rendered objects)
against live, and one revision against another.

``diff/?revision=<sha>&object=<Kind>/<namespace>/<name>``: every object the
revision renders beside its live object (``kapi.admin.desired``), or the one
named; the revision defaults to the applied one, and any other shows what a
rollback to it would change, and which objects it would prune.
``revisions/?a=<sha>&b=<sha>``: ``status.history`` with each commit's
message and author, Roll back / Unpin, and the unified diff of two
revisions' rendered objects.
"""

from __future__ import annotations

import difflib
import re

from django.http import Http404
from django.shortcuts import render
from pygments import highlight
from pygments.lexers import DiffLexer

from kapi.admin import access, desired, gitops
from kapi.admin.views.common import kind_url, object_url, site_context
from kapi.admin.views.detail import _DIFF, without_managed_fields
from kapi.admin.views.live import live_context
from kapi.admin.views.synctree import sync_object
from kapi.api.renderers import dump_yaml
from kapi.errors import StatusError
from kapi.registry.store import Registry
from kapi.storage import gitopsreads

__all__ = ["diff_page", "revisions_page"]

_SHA = re.compile(r"^[0-9a-f]{7,40}$")


def _repository(request, sync: dict) -> dict:
    from sync.kinds import repository_type

    rt = repository_type()
    ns = sync["metadata"]["namespace"]
    name = ((sync.get("spec") or {}).get("sourceRef") or {}).get("name", "")
    access.require(request, "get", rt, ns, name)
    try:
        return Registry().get(rt, ns, name)
    except StatusError as exc:
        raise Http404(exc.status.get("message", "")) from None


def _full_sha(repo: dict, sha: str) -> str:
    from sync import gitstore
    from sync.source import repository_dir

    return gitstore.resolve(repository_dir(repo), {"commit": sha})[0]


def _render(repo, sync, sha) -> tuple[dict, str]:
    from sync.gitstore import GitError
    from sync.render import RenderError

    try:
        return desired.rendered(sync, repo, _full_sha(repo, sha)), ""
    except RenderError as exc:
        return {}, "; ".join(exc.messages[:5])
    except (GitError, OSError, ValueError) as exc:
        return {}, f"cannot read revision {sha[:12]}: {exc}"


def _base(rt, ns, name, title) -> dict:
    return {
        "title": title, "rt": rt, "namespace": ns, "name": name,
        "kind_url": kind_url(rt), "object_url": object_url(rt, ns, name),
        "tree_url": object_url(rt, ns, name, "kapi_sync_tree"),
        "revisions_url": object_url(rt, ns, name, "kapi_sync_revisions"),
        "diff_url": object_url(rt, ns, name, "kapi_sync_diff"),
    }


def _live(entries, may_get) -> dict:
    keys = {}
    for entry in entries:
        if entry.rt is not None and may_get(entry):
            keys[(entry.rt.stored_group, entry.rt.stored_resource,
                  entry.namespace if entry.rt.namespaced else "", entry.name)] = entry
    out = {}
    for stored in gitopsreads.at_keys(list(keys)):
        entry = keys[(stored.group, stored.resource, stored.namespace, stored.name)]
        out[entry.id] = entry.rt.strategy.from_storage(stored.object, entry.rt.version)
    return out


def diff_page(request, group, version, plural, namespace, name):
    stamp = live_context([])
    rt, ns, sync = sync_object(request, group, version, plural, namespace, name)
    repo = _repository(request, sync)
    row = gitops.summarize(sync, repo)
    sha = (request.GET.get("revision") or row.sha or "").lower()
    if sha and not _SHA.match(sha):
        raise Http404("not a commit")
    wanted = request.GET.get("object", "")
    context = _base(rt, ns, name, f"Sync {ns}/{name}: desired against live")
    context.update(row=row, sha=sha, wanted=wanted, applied=bool(sha) and row.sha.startswith(sha))
    if not sha:
        context["error"] = "The Sync has applied no revision yet."
        return render(request, "kapi_admin/sync_diff.html", site_context(request, context))
    entries, error = _render(repo, sync, sha)
    context["commit_message"], context["author"] = gitops.commit_of(repo, sha)

    def may_get(entry) -> bool:
        return access.allowed(request, "get", entry.rt, entry.namespace, entry.name)

    chosen = [e for e in entries.values() if e.rt is not None and may_get(e)
              and (not wanted or wanted == f"{e.kind}/{e.namespace}/{e.name}")]
    live = _live(chosen, may_get)
    objects = []
    for entry in chosen:
        result = desired.compare(without_managed_fields(entry.obj), live.get(entry.id))
        objects.append({"entry": entry, "live": entry.id in live, "diff": result, "rows": result.rows})
    from sync.apply import parse_id

    inventory = ((sync.get("status") or {}).get("inventory") or {}).get("entries") or []
    pruned = []
    for item in inventory:
        if item.get("id") not in entries:
            try:
                item_ns, item_name, _g, kind, _v = parse_id(item)
            except ValueError:
                continue
            pruned.append(f"{kind} {item_ns + '/' if item_ns else ''}{item_name}")
    context.update(error=error, objects=objects, pruned=pruned if not wanted else [],
                   prune_on=(sync.get("spec") or {}).get("prune", True),
                   **{**stamp, "live_namespaces": " ".join(sorted({ns} | {e.namespace for e in chosen if e.namespace}))})
    return render(request, "kapi_admin/sync_diff.html", site_context(request, context))


def revisions_page(request, group, version, plural, namespace, name):
    from kapi.admin.models import ADMIN_EDIT

    rt, ns, sync = sync_object(request, group, version, plural, namespace, name)
    repo = _repository(request, sync)
    status = sync.get("status") if isinstance(sync.get("status"), dict) else {}
    row = gitops.summarize(sync, repo)
    entries = []
    for entry in status.get("history") or []:
        if not isinstance(entry, dict):
            continue
        branch, sha = gitops.short_revision(str(entry.get("revision") or ""))
        message, author = gitops.commit_of(repo, sha)
        entries.append({**entry, "sha": sha, "branch": branch, "message": message, "author": author,
                        "current": entry.get("revision") == row.revision})
    shas = [e["sha"] for e in entries if e["sha"]]
    b = request.GET.get("b") or (shas[0] if shas else "")
    a = request.GET.get("a") or (shas[1] if len(shas) > 1 else b)
    context = _base(rt, ns, name, f"Sync {ns}/{name}: revisions")
    context.update(row=row, history=entries, a=a, b=b, pin=status.get("pin"),
                   can_edit=request.user.has_perm(ADMIN_EDIT) and access.allowed(request, "update", rt, ns, name),
                   rollback_url=object_url(rt, ns, name, "kapi_rollback"))
    if a and b and a != b and _SHA.match(a) and _SHA.match(b):
        old, old_error = _render(repo, sync, a)
        new, new_error = _render(repo, sync, b)
        context["compare_error"] = old_error or new_error
        chunks = []
        for oid in sorted(set(old) | set(new)):
            before = dump_yaml(old[oid].obj).decode().splitlines() if oid in old else []
            after = dump_yaml(new[oid].obj).decode().splitlines() if oid in new else []
            entry = new.get(oid) or old[oid]
            label = f"{entry.kind} {entry.namespace + '/' if entry.namespace else ''}{entry.name}"
            lines = list(difflib.unified_diff(before, after, f"{label} at {a[:12]}", f"{label} at {b[:12]}",
                                              lineterm=""))
            if lines:
                chunks.append("\n".join(lines))
        diff = "\n".join(chunks)
        context["diff_html"] = highlight(diff, DiffLexer(), _DIFF) if diff else ""
        context["compared"] = True
    from kapi.admin.yamlview import pygments_css

    context["pygments_css"] = pygments_css()
    return render(request, "kapi_admin/sync_revisions.html", site_context(request, context))
