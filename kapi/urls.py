"""Root URLs: the Kubernetes API at /, the admin UI at /admin/."""

from django.contrib import admin
from django.urls import include, path

from kapi.api.middleware import not_found_handler

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("kapi.api.urls")),
]

handler404 = not_found_handler
