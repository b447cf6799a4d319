"""Root URLs: the Kubernetes API at /, the admin UI at /admin/, then the URLs
of installed apps (``KAPI_URLCONFS``: the sync's git and hooks)."""

from django.conf import settings
from django.contrib import admin
from django.urls import include, path

from kapi.api.middleware import not_found_handler

urlpatterns = [
    # The Kubernetes API first: it serves nearly every request.
    path("", include("kapi.api.urls")),
    path("admin/", admin.site.urls),
    *(path("", include(module)) for module in getattr(settings, "KAPI_URLCONFS", ())),
]

handler404 = not_found_handler
