"""The admin site: Django's admin plus the pages over Kubernetes objects.

URLs (under ``/admin/``; the core group is spelled ``core`` and a cluster-scoped
object's namespace ``_``)::

    kapi/<group>/<version>/<plural>/                     objects of a kind
    kapi/<group>/<version>/<plural>/create/              new object (YAML)
    kapi/<group>/<version>/<plural>/<ns>/<name>/         object page
    .../<ns>/<name>/history/  edit/  delete/  reveal/    its history, edits, secrets
    .../<ns>/<name>/reconcile/  suspend/  rollback/       Sync actions
    (the index)                                          the GitOps home: every Sync
    kinds/                                               API groups and kinds
    syncs/                                               GitRepositories and Syncs
    .../syncs/<ns>/<name>/tree/  revisions/  diff/       a Sync's tree, revisions, diff
    live/                                                has a live page changed? (``views.live``)

Every page needs a staff user (``admin_view``) and reads as that user's
Kubernetes identity: RBAC decides what it shows (``kapi.admin.access``); edits
need RBAC's verb and also ``kapi_admin.edit_objects``. Failed sign-ins are throttled (``kapi.admin.throttle``):
a locked sign-in is answered 429 with ``Retry-After`` and says so on the form.
"""

from __future__ import annotations

from django.contrib import admin
from django.urls import path

__all__ = ["KapiAdminSite"]


class KapiAdminSite(admin.AdminSite):
    site_header = "kapi administration"
    site_title = "kapi admin"
    index_title = "Kubernetes API"
    index_template = "kapi_admin/index.html"
    # The sidebar would list only Django's own models (users, groups): the
    # GitOps home and the kind tables are the navigation.
    enable_nav_sidebar = False

    @property
    def login_form(self):
        from kapi.admin.login import ThrottledAuthenticationForm

        return ThrottledAuthenticationForm

    def login(self, request, extra_context=None):
        response = super().login(request, extra_context)
        wait = getattr(request, "kapi_login_retry_after", None)
        if wait:
            response.status_code = 429
            response["Retry-After"] = str(wait)
        return response

    def get_urls(self):
        from kapi.admin.views import (
            browse,
            detail,
            edit,
            live,
            syncdiff,
            syncs,
            synctree,
        )

        v = self.admin_view
        kind = "kapi/<str:group>/<str:version>/<str:plural>/"
        obj = kind + "<str:namespace>/<str:name>/"
        return [
            path("kinds/", v(self.kinds), name="kapi_kinds"),
            path("syncs/", v(syncs.sync_list), name="kapi_syncs"),
            path("live/", v(live.live), name="kapi_live"),
            path(obj + "tree/", v(synctree.tree_page), name="kapi_sync_tree"),
            path(obj + "revisions/", v(syncdiff.revisions_page), name="kapi_sync_revisions"),
            path(obj + "diff/", v(syncdiff.diff_page), name="kapi_sync_diff"),
            path(kind, v(browse.kind_list), name="kapi_kind"),
            path(kind + "create/", v(edit.create), name="kapi_create"),
            path(obj, v(detail.object_page), name="kapi_object"),
            path(obj + "history/", v(detail.history_page), name="kapi_history"),
            path(obj + "edit/", v(edit.edit), name="kapi_edit"),
            path(obj + "delete/", v(edit.delete), name="kapi_delete"),
            path(obj + "reveal/", v(detail.reveal), name="kapi_reveal"),
            path(obj + "reconcile/", v(syncs.reconcile), name="kapi_reconcile"),
            path(obj + "suspend/", v(syncs.suspend), name="kapi_suspend"),
            path(obj + "rollback/", v(syncs.rollback), name="kapi_rollback"),
            *super().get_urls(),
        ]

    def index(self, request, extra_context=None):
        """The GitOps home (``kapi.admin.views.home``)."""
        from kapi.admin.views.home import home

        return home(request)

    def kinds(self, request, extra_context=None):
        """Every served group with its kinds and counts, and Django's own models."""
        from kapi.admin.views.browse import groups_context

        return super().index(request, {**groups_context(request), **(extra_context or {})})
