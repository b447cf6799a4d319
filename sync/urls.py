"""The sync app's URLs: hosted git repositories (smart HTTP) and the hooks.

Mounted at the root by ``kapi.urls`` through ``KAPI_URLCONFS`` in settings, so
the API server does not import the sync.
"""

from django.urls import path, re_path

from sync.http import git_http, pre_receive, push_wait, webhook

urlpatterns = [
    re_path(r"^git/(?P<namespace>[^/]+)/(?P<name>[^/]+)\.git/(?P<rest>.*)$", git_http),
    # Forge webhooks, and the hosted repositories' pre-receive and proc-receive hooks.
    path("hooks/git/<str:namespace>/<str:name>", webhook),
    path("hooks/pre-receive/<str:namespace>/<str:name>", pre_receive),
    path("hooks/push-wait/<str:namespace>/<str:name>", push_wait),
]
