"""URL patterns of the Kubernetes API."""

from django.urls import path, re_path

from kapi.api import metrics, views

__all__ = ["urlpatterns"]

urlpatterns = [
    # Resource URLs first: nearly every request is one, and Django tries the
    # patterns in order (no other pattern here matches these paths).
    re_path(r"^api/[^/]+/.+$", views.ResourceView.as_view()),
    re_path(r"^apis/[^/]+/[^/]+/.+$", views.ResourceView.as_view()),
    path("version", views.VersionView.as_view()),
    path("version/", views.VersionView.as_view()),
    path("metrics", metrics.MetricsView.as_view()),
    path("healthz", views.HealthView.as_view()),
    path("livez", views.HealthView.as_view()),
    path("readyz", views.HealthView.as_view(check_database=True)),
    re_path(r"^(?:healthz|livez|readyz)/.+$", views.HealthView.as_view()),
    path("openapi/v2", views.OpenAPIView.as_view(), {"version": "v2"}),
    path("openapi/v3", views.OpenAPIView.as_view(), {"version": "v3"}),
    re_path(r"^openapi/v3/(?P<path>.+)$", views.OpenAPIView.as_view(), {"version": "v3"}),
    path("api", views.APIRootView.as_view(legacy=True)),
    path("api/", views.APIRootView.as_view(legacy=True)),
    path("apis", views.APIRootView.as_view(legacy=False)),
    path("apis/", views.APIRootView.as_view(legacy=False)),
    re_path(r"^api/(?P<version>[^/]+)/?$", views.APIResourceListView.as_view()),
    re_path(r"^apis/(?P<group>[^/]+)/?$", views.APIGroupView.as_view()),
    re_path(r"^apis/(?P<group>[^/]+)/(?P<version>[^/]+)/?$", views.APIResourceListView.as_view()),
]
