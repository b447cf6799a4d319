"""``GET /metrics``: Prometheus text format, authorized like any non-resource URL.

As in kube, only users RBAC allows ``get`` on the non-resource URL
``/metrics`` may read it: ``cluster-admin``, and the ``system:monitoring``
group through the bootstrap ClusterRole of the same name.
"""

from __future__ import annotations

from django.http import HttpResponse

from kapi.api.views import KubernetesView
from kapi.observability.exposition import CONTENT_TYPE_LATEST, render

__all__ = ["MetricsView"]


class MetricsView(KubernetesView):
    def get(self, request):
        return HttpResponse(render(), content_type=CONTENT_TYPE_LATEST)
