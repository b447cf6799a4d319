"""Root URLs: the Kubernetes API at /, the admin UI at /admin/, git at /git/ and /hooks/git/."""

from django.contrib import admin
from django.urls import include, path, re_path

from kapi.api.middleware import not_found_handler
from sync.http import git_http, pre_receive, webhook

urlpatterns = [
    # The Kubernetes API first: it serves nearly every request.
    path("", include("kapi.api.urls")),
    path("admin/", admin.site.urls),
    # Hosted git repositories (smart HTTP) and forge webhooks of the sync app.
    re_path(r"^git/(?P<namespace>[^/]+)/(?P<name>[^/]+)\.git/(?P<rest>.*)$", git_http),
    path("hooks/git/<str:namespace>/<str:name>", webhook),
    path("hooks/pre-receive/<str:namespace>/<str:name>", pre_receive),
]

handler404 = not_found_handler
