"""What the admin views share: finding the resource type, URLs, permissions."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.urls import reverse

from kapi.admin.models import ADMIN_EDIT
from kapi.registry.catalog import catalog
from kapi.registry.resource import ResourceType

__all__ = [
    "CLUSTER",
    "FIELD_MANAGER",
    "group_segment",
    "kind_url",
    "object_url",
    "require_edit",
    "resource_type",
    "served_type",
    "site_context",
    "stored_type",
    "url_namespace",
]

#: The field manager of every write the admin makes.
FIELD_MANAGER = "kapi-admin"
#: The namespace segment of a cluster-scoped object's URL.
CLUSTER = "_"


def group_segment(group: str) -> str:
    return group or "core"


def resource_type(group: str, version: str, plural: str) -> ResourceType:
    rt = catalog().lookup("" if group == "core" else group, version, plural)
    if rt is None:
        raise Http404(f"{plural}.{group}/{version} is not served")
    return rt


def url_namespace(rt: ResourceType, namespace: str) -> str:
    """The namespace a URL segment stands for ("" when cluster-scoped)."""
    return namespace if rt.namespaced and namespace != CLUSTER else ""


def kind_url(rt: ResourceType) -> str:
    return reverse(
        "admin:kapi_kind", args=[group_segment(rt.group), rt.version, rt.plural]
    )


def object_url(rt: ResourceType, namespace: str, name: str, page: str = "kapi_object") -> str:
    return reverse(
        f"admin:{page}",
        args=[group_segment(rt.group), rt.version, rt.plural, namespace or CLUSTER, name],
    )


def served_type(api_version: str, kind: str) -> ResourceType | None:
    group, _, version = api_version.rpartition("/")
    return catalog().for_kind(group, version, kind)




def stored_type(group: str, resource: str) -> ResourceType | None:
    """The preferred served type of a stored (group, resource)."""
    for rt in catalog().types():
        if (rt.stored_group, rt.stored_resource) == (group, resource) and rt.group == group:
            return rt
    for rt in catalog().types():
        if (rt.stored_group, rt.stored_resource) == (group, resource):
            return rt
    return None


def require_edit(request, verb: str = "", rt: ResourceType | None = None, namespace: str = "",
                 name: str = "") -> None:
    """403 unless the user has the admin's edit permission and, given a
    ``verb`` and ``rt``, RBAC allows it (``kapi.admin.access``)."""
    if not request.user.has_perm(ADMIN_EDIT):
        raise PermissionDenied("editing objects needs the kapi_admin.edit_objects permission")
    if verb and rt is not None:
        from kapi.admin import access

        access.require(request, verb, rt, namespace, name)


def site_context(request, context: dict) -> dict:
    """The admin's common template context (sidebar, user links) plus ``context``."""
    from django.contrib import admin

    return {**admin.site.each_context(request), **context}
