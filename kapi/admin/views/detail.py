"""The object page (YAML with field owners, metadata, relations, Events, history)
and the history page (a diff between any two versions)."""

from __future__ import annotations

import difflib

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_POST
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import DiffLexer

from kapi.admin import access, queries
from kapi.admin.managed_fields import manager_label, owner_tree
from kapi.admin.models import ADMIN_EDIT, ADMIN_REVEAL
from kapi.admin.redact import is_secret, log_reveal, redact
from kapi.admin.views.common import (
    kind_url,
    object_url,
    resource_type,
    served_type,
    site_context,
    stored_type,
    url_namespace,
)
from kapi.admin.yamlview import annotated_lines, highlighted, pygments_css
from kapi.api.renderers import dump_yaml
from kapi.errors import StatusError
from kapi.registry.store import Registry

__all__ = ["history_page", "object_page", "reveal", "sync_kind"]

SYNC_GROUP = "sync.kapi.dev"


def sync_kind(rt) -> str:
    """"GitRepository", "Sync" or "" for other kinds."""
    if rt.group == SYNC_GROUP and rt.kind in ("GitRepository", "Sync"):
        return rt.kind
    return ""


def _get(rt, namespace: str, name: str) -> dict:
    try:
        return Registry().get(rt, namespace, name)
    except StatusError as exc:
        if exc.code == 404:
            raise Http404(exc.status.get("message", "not found")) from None
        raise


def without_managed_fields(obj: dict) -> dict:
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}
    return {**obj, "metadata": meta}


def object_page(request, group, version, plural, namespace, name, revealed=False):
    rt = resource_type(group, version, plural)
    ns = url_namespace(rt, namespace)
    access.require(request, "get", rt, ns, name)
    obj = _get(rt, ns, name)
    secret = is_secret(rt)
    shown = obj if (revealed or not secret) else redact(obj)
    meta = shown.get("metadata") or {}
    managed = meta.get("managedFields") or []
    body = without_managed_fields(shown)
    lines = highlighted(annotated_lines(body, owner_tree(managed)))
    managers = sorted({m for line in lines for m in line.owners})
    legend = {m: i % 8 for i, m in enumerate(managers)}
    for line in lines:
        line.tags = [(m, legend[m]) for m in line.owners]

    owners = []
    for ref in meta.get("ownerReferences") or []:
        ort = served_type(ref.get("apiVersion", ""), ref.get("kind", ""))
        owners.append(
            {
                "ref": ref,
                "url": object_url(ort, ns if ort.namespaced else "", ref.get("name", ""))
                if ort
                else "",
            }
        )
    dependents = []
    for g, r, dns, dname, _dmeta in queries.dependents(meta.get("uid", ""), ns):
        drt = stored_type(g, r)
        if drt is not None and not access.allowed(request, "get", drt, dns, dname):
            continue
        dependents.append(
            {
                "kind": drt.kind if drt else f"{r}.{g}",
                "namespace": dns,
                "name": dname,
                "url": object_url(drt, dns, dname) if drt else "",
            }
        )
    events = [
        {
            "type": e.get("type", ""),
            "reason": e.get("reason", ""),
            "message": e.get("message", ""),
            "count": e.get("count") or 1,
            "last": e.get("lastTimestamp") or e.get("eventTime") or "",
        }
        for e in (queries.related_events(meta.get("uid", ""), ns)
                  if rt.plural != "events" and _may_list_events(request, ns) else [])
    ]
    status = shown.get("status") if isinstance(shown.get("status"), dict) else {}
    conditions = status.get("conditions") if isinstance(status.get("conditions"), list) else []
    history = queries.history(meta.get("uid", ""))

    context = {
        "title": f"{rt.kind} {ns + '/' if ns else ''}{name}",
        "rt": rt,
        "obj": shown,
        "meta": meta,
        "namespace": ns,
        "name": name,
        "yaml_lines": lines,
        "yaml_text": dump_yaml(body).decode(),
        "legend": legend,
        "managed_fields": [
            {"label": manager_label(e), **e} for e in managed if isinstance(e, dict)
        ],
        "labels": sorted((meta.get("labels") or {}).items()),
        "annotations": sorted((meta.get("annotations") or {}).items()),
        "conditions": [c for c in conditions if isinstance(c, dict)],
        "owners": owners,
        "dependents": dependents,
        "events": events,
        "history": history,
        "secret": secret,
        "revealed": revealed,
        "can_reveal": secret and request.user.has_perm(ADMIN_REVEAL),
        "can_edit": request.user.has_perm(ADMIN_EDIT) and access.allowed(request, "update", rt, ns, name),
        "kind_url": kind_url(rt),
        "edit_url": object_url(rt, ns, name, "kapi_edit"),
        "delete_url": object_url(rt, ns, name, "kapi_delete"),
        "reveal_url": object_url(rt, ns, name, "kapi_reveal"),
        "history_url": object_url(rt, ns, name, "kapi_history"),
        "sync_kind": sync_kind(rt),
        "pygments_css": pygments_css(),
    }
    if context["sync_kind"] == "Sync":
        from kapi.admin.views.syncs import sync_panel

        context.update(sync_panel(rt, shown))
    return render(request, "kapi_admin/object.html", site_context(request, context))


def _may_list_events(request, namespace: str) -> bool:
    from kapi.registry.catalog import catalog

    return access.allowed(request, "list", catalog().lookup("", "v1", "events"), namespace or "default")


@require_POST
def reveal(request, group, version, plural, namespace, name):
    rt = resource_type(group, version, plural)
    if not is_secret(rt):
        raise Http404("only Secrets have values to reveal")
    if not request.user.has_perm(ADMIN_REVEAL):
        raise PermissionDenied("revealing Secrets needs the kapi_admin.reveal_secrets permission")
    ns = url_namespace(rt, namespace)
    access.require(request, "get", rt, ns, name)
    obj = _get(rt, ns, name)
    log_reveal(request.user, rt, ns, name, obj["metadata"].get("uid", ""), "object page")
    return object_page(request, group, version, plural, namespace, name, revealed=True)


_DIFF = HtmlFormatter(nowrap=True, classprefix="y-")


def history_page(request, group, version, plural, namespace, name):
    rt = resource_type(group, version, plural)
    ns = url_namespace(rt, namespace)
    access.require(request, "get", rt, ns, name)
    obj = _get(rt, ns, name)
    uid = obj["metadata"].get("uid", "")
    entries = queries.history(uid)
    rvs = [e.resource_version for e in entries]

    def pick(param: str, default: int | None) -> int | None:
        try:
            value = int(request.GET.get(param, ""))
        except ValueError:
            return default
        return value if value in rvs else default

    b = pick("b", rvs[0] if rvs else None)
    a = pick("a", rvs[1] if len(rvs) > 1 else b)
    if a is not None and b is not None and a > b:
        a, b = b, a
    diff_html = ""
    if a is not None and b is not None:
        full = queries.versions(uid, [a, b])
        secret = is_secret(rt)

        def text(rv: int) -> list[str]:
            data = full[rv].data
            data = redact(data) if secret else data
            data = without_managed_fields(data)
            return dump_yaml(data).decode().splitlines()

        diff = "\n".join(
            difflib.unified_diff(text(a), text(b), f"resourceVersion {a}", f"resourceVersion {b}",
                                 lineterm="", n=3)
        )
        diff_html = highlight(diff, DiffLexer(), _DIFF) if diff else ""
    context = {
        "title": f"History of {rt.kind} {ns + '/' if ns else ''}{name}",
        "rt": rt,
        "namespace": ns,
        "name": name,
        "history": entries,
        "a": a,
        "b": b,
        "diff_html": diff_html,
        "kind_url": kind_url(rt),
        "object_url": object_url(rt, ns, name),
        "pygments_css": pygments_css(),
    }
    return render(request, "kapi_admin/history.html", site_context(request, context))
