"""One metric sample and one log line per API request, and its request id.

The outermost Django middleware: it sees every request (finished or watch,
allowed or not), gives it a request id (the client's ``X-Request-Id`` if sane,
else a new UUID) that is returned as ``X-Request-Id`` and ``Audit-Id``, made
current for log lines and enqueued tasks, and, when the response is ready,
counts ``apiserver_request_total`` / ``apiserver_request_duration_seconds``
with kube's labels and logs ``kapi.request``: time, user, verb, group,
resource, namespace, name, code, duration, request id.

The labels come from the authorizer attributes the permission class left on
the request (``kapi_attrs``); a request that failed before that (401, a bad
URL) is labelled with its HTTP method only. Verbs are kube's metric verbs
(``LIST``, ``WATCH``, ``POST``, ``APPLY``...).
"""

from __future__ import annotations

import logging
import os
import time

from django.core.exceptions import MiddlewareNotUsed

from kapi.observability import metrics, requestlog
from kapi.observability.context import (
    REQUEST_ID_HEADER,
    new_request_id,
    reset_request_id,
    set_request_id,
)

__all__ = ["RequestObserver", "metric_verb"]

log = logging.getLogger(requestlog.LOGGER)

_VERBS = {
    "get": "GET",
    "list": "LIST",
    "watch": "WATCH",
    "create": "POST",
    "update": "PUT",
    "patch": "PATCH",
    "delete": "DELETE",
    "deletecollection": "DELETECOLLECTION",
}
_APPLY = "application/apply-patch"


def metric_verb(verb: str, content_type: str = "") -> str:
    """kube's ``apiserver_request_total`` verb for an authorizer verb."""
    if verb == "patch" and content_type.startswith(_APPLY):
        return "APPLY"
    return _VERBS.get(verb, verb.upper())


def _served(group: str, version: str, resource: str, subresource: str) -> tuple[str, str, str, str]:
    """The request's type labels if the type is served, else empty ones.

    As kube-apiserver, which counts requests only on installed routes: a path
    naming a made-up resource (any string a client invents: 403 or 404) must
    not become a new series of ``apiserver_request_total`` and of each bucket
    of ``apiserver_request_duration_seconds``, or anyone authenticated could
    grow every scrape without bound. A deleted CRD's type stops getting new
    series the same way."""
    from kapi.registry.catalog import catalog

    rt = catalog().lookup(group, version, resource)
    if rt is None:
        return "", "", "", ""
    if subresource and rt.subresource(subresource) is None:
        return group, version, resource, ""
    return group, version, resource, subresource


def _labels(request, attrs) -> dict:
    if attrs is None or not attrs.resource_request:
        return {
            "verb": request.method.upper(), "group": "", "version": "", "resource": "",
            "subresource": "", "scope": "", "namespace": "", "name": "",
        }
    scope = "resource" if attrs.name else ("namespace" if attrs.namespace else "cluster")
    return {
        "verb": metric_verb(attrs.verb, request.META.get("CONTENT_TYPE", "")),
        "group": attrs.api_group,
        "version": attrs.api_version,
        "resource": attrs.resource,
        "subresource": attrs.subresource,
        "scope": scope,
        "namespace": attrs.namespace,
        "name": attrs.name,
    }


class RequestObserver:
    """Request id, metrics and the access log line, around everything else."""

    sync_capable = True
    async_capable = False

    def __init__(self, get_response):
        if os.environ.get("KAPI_METRICS", "1") == "0":
            # For measuring what this costs (bench/core_create.py with and without).
            raise MiddlewareNotUsed("KAPI_METRICS=0")
        self.get_response = get_response

    def __call__(self, request):
        if request.path.startswith("/static"):
            return self.get_response(request)
        started = time.perf_counter()
        request_id = new_request_id(request.META.get("HTTP_X_REQUEST_ID"))
        request.kapi_request_id = request_id
        token = set_request_id(request_id)
        try:
            response = self.get_response(request)
        finally:
            reset_request_id(token)
        response[REQUEST_ID_HEADER] = request_id
        if not response.has_header("Audit-Id"):
            response["Audit-Id"] = request_id
        self._observe(request, response, time.perf_counter() - started, request_id)
        return response

    @staticmethod
    def _observe(request, response, duration: float, request_id: str) -> None:
        attrs = getattr(request, "kapi_attrs", None)
        labels = _labels(request, attrs)
        code = str(response.status_code)
        if request.path != "/metrics":
            typ = _served(labels["group"], labels["version"], labels["resource"],
                          labels["subresource"]) if labels["resource"] else ("", "", "", "")
            metrics.REQUEST_TOTAL.labels(
                labels["verb"], *typ, labels["scope"], code,
            ).inc()
            metrics.REQUEST_DURATION.labels(
                labels["verb"], *typ, labels["scope"],
            ).observe(duration)
        if not log.isEnabledFor(logging.INFO):
            return
        user = getattr(request, "kapi_user", None)
        requestlog.write({
            "user": getattr(user, "username", "") if user else "",
            "verb": labels["verb"],
            "group": labels["group"],
            "resource": labels["resource"],
            "subresource": labels["subresource"],
            "namespace": labels["namespace"],
            "name": labels["name"],
            "path": request.path,
            "code": response.status_code,
            "duration": round(duration, 6),
            "requestID": request_id,
        })
