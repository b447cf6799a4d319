"""Create, edit (YAML) and delete through the registry, as a kubectl request would.

Each write is one registry call with field manager ``kapi-admin``: validation,
the resourceVersion check of a stale edit, admission and managedFields all
apply. A refused write renders the form again with the text as submitted and
the Kubernetes ``Status`` (message and causes), so nothing typed is lost; a
conflict also shows how the object stands now.
"""

from __future__ import annotations

import difflib

import yaml
from django.contrib import messages
from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import render

from kapi.admin.models import ADMIN_REVEAL, KapiPermissions
from kapi.admin.redact import is_secret, log_reveal
from kapi.admin.views.common import (
    FIELD_MANAGER,
    kind_url,
    object_url,
    require_edit,
    resource_type,
    site_context,
    url_namespace,
)
from kapi.admin.views.detail import without_managed_fields
from kapi.api.renderers import dump_yaml
from kapi.errors import StatusError
from kapi.registry.options import CreateOptions, DeleteOptions, UpdateOptions
from kapi.registry.store import Registry

__all__ = ["create", "delete", "edit"]


def _log(user, flag: int, rt, namespace: str, name: str, uid: str, message: str) -> None:
    LogEntry.objects.create(
        user_id=user.pk,
        content_type=ContentType.objects.get_for_model(KapiPermissions),
        object_id=uid,
        object_repr=f"{rt.kind} {namespace + '/' if namespace else ''}{name}"[:200],
        action_flag=flag,
        change_message=message,
    )


def _parse(text: str) -> tuple[dict | None, str]:
    try:
        body = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        return None, f"The YAML does not parse: {exc}"
    if not isinstance(body, dict):
        return None, "The YAML must be one object (a mapping)."
    return body, ""


def _status(exc: StatusError) -> dict:
    status = exc.status
    details = status.get("details") or {}
    return {
        "code": exc.code,
        "reason": status.get("reason", ""),
        "message": status.get("message", ""),
        "causes": details.get("causes") or [],
    }


def _form(request, template_context: dict):
    return render(
        request,
        "kapi_admin/edit.html",
        site_context(request, template_context),
        status=template_context.get("http_status", 200),
    )


def create(request, group, version, plural):
    require_edit(request)
    rt = resource_type(group, version, plural)
    namespace = request.GET.get("namespace") or "default"
    context = {
        "title": f"Create {rt.kind}",
        "rt": rt,
        "kind_url": kind_url(rt),
        "mode": "create",
    }
    if request.method != "POST":
        template = {"apiVersion": rt.api_version, "kind": rt.kind, "metadata": {"name": ""}}
        if rt.namespaced:
            template["metadata"]["namespace"] = namespace
        return _form(request, {**context, "text": dump_yaml(template).decode()})
    text = request.POST.get("yaml", "")
    body, error = _parse(text)
    if body is None:
        return _form(request, {**context, "text": text, "error": error, "http_status": 400})
    ns = ""
    if rt.namespaced:
        ns = str((body.get("metadata") or {}).get("namespace") or namespace)
    require_edit(request, "create", rt, ns)
    try:
        obj = Registry().create(rt, ns, body, CreateOptions(field_manager=FIELD_MANAGER))
    except StatusError as exc:
        return _form(
            request, {**context, "text": text, "status": _status(exc), "http_status": exc.code}
        )
    meta = obj["metadata"]
    _log(request.user, ADDITION, rt, ns, meta["name"], meta.get("uid", ""), "Created")
    messages.success(request, f"{rt.kind} {meta['name']} created.")
    return HttpResponseRedirect(object_url(rt, ns, meta["name"]))


def edit(request, group, version, plural, namespace, name):
    rt = resource_type(group, version, plural)
    ns = url_namespace(rt, namespace)
    require_edit(request, "update", rt, ns, name)
    registry = Registry()
    secret = is_secret(rt)
    if secret and not request.user.has_perm(ADMIN_REVEAL):
        # The editor shows the values: editing a Secret is revealing it.
        from django.core.exceptions import PermissionDenied

        raise PermissionDenied("editing a Secret needs the kapi_admin.reveal_secrets permission")
    try:
        current = registry.get(rt, ns, name)
    except StatusError as exc:
        if exc.code == 404:
            raise Http404(exc.status.get("message", "")) from None
        raise
    context = {
        "title": f"Edit {rt.kind} {ns + '/' if ns else ''}{name}",
        "rt": rt,
        "kind_url": kind_url(rt),
        "object_url": object_url(rt, ns, name),
        "namespace": ns,
        "name": name,
        "mode": "edit",
    }
    if request.method != "POST":
        if secret:
            log_reveal(request.user, rt, ns, name, current["metadata"].get("uid", ""), "edit")
        text = dump_yaml(without_managed_fields(current)).decode()
        return _form(request, {**context, "text": text})

    text = request.POST.get("yaml", "")
    body, error = _parse(text)
    if body is None:
        return _form(request, {**context, "text": text, "error": error, "http_status": 400})
    try:
        obj, _ = registry.update(rt, ns, name, body, UpdateOptions(field_manager=FIELD_MANAGER))
    except StatusError as exc:
        extra = {}
        if exc.code == 409:
            # Show what changed meanwhile; the submitted text stays in the editor.
            now = dump_yaml(without_managed_fields(current)).decode().splitlines()
            mine = text.splitlines()
            extra = {
                "current_version": current["metadata"].get("resourceVersion", ""),
                "conflict_diff": "\n".join(
                    difflib.unified_diff(mine, now, "your edit", "stored now", lineterm="")
                ),
            }
        return _form(
            request,
            {**context, "text": text, "status": _status(exc), "http_status": exc.code, **extra},
        )
    meta = obj["metadata"]
    _log(request.user, CHANGE, rt, ns, name, meta.get("uid", ""),
         f"Edited (resourceVersion {meta.get('resourceVersion')})")
    messages.success(request, f"{rt.kind} {name} saved (resourceVersion {meta.get('resourceVersion')}).")
    return HttpResponseRedirect(object_url(rt, ns, name))


def delete(request, group, version, plural, namespace, name):
    rt = resource_type(group, version, plural)
    ns = url_namespace(rt, namespace)
    require_edit(request, "delete", rt, ns, name)
    registry = Registry()
    context = {
        "title": f"Delete {rt.kind} {ns + '/' if ns else ''}{name}",
        "rt": rt,
        "kind_url": kind_url(rt),
        "object_url": object_url(rt, ns, name),
        "namespace": ns,
        "name": name,
    }
    if request.method != "POST":
        try:
            obj = registry.get(rt, ns, name)
        except StatusError as exc:
            raise Http404(exc.status.get("message", "")) from None
        context["finalizers"] = obj["metadata"].get("finalizers") or []
        return render(request, "kapi_admin/delete.html", site_context(request, context))
    try:
        obj, deleted_now = registry.delete(rt, ns, name, DeleteOptions())
    except StatusError as exc:
        context["status"] = _status(exc)
        return render(
            request, "kapi_admin/delete.html", site_context(request, context), status=exc.code
        )
    meta = obj["metadata"]
    if deleted_now:
        _log(request.user, DELETION, rt, ns, name, meta.get("uid", ""), "Deleted")
        messages.success(request, f"{rt.kind} {name} deleted.")
        return HttpResponseRedirect(kind_url(rt))
    _log(request.user, DELETION, rt, ns, name, meta.get("uid", ""), "Deletion requested")
    messages.warning(
        request,
        f"{rt.kind} {name} is being deleted: it stays until its finalizers "
        f"({', '.join(meta.get('finalizers') or [])}) are removed.",
    )
    return HttpResponseRedirect(object_url(rt, ns, name))
