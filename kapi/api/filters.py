"""The request filters of kube-apiserver's handler chain that need a user, as one
DRF permission class and one finalize step (``pkg/endpoints/filters``):

authentication (DRF, ``kapi.api.authentication``) → 401 if none →
impersonation → per-user in-flight limit (429) → authorization (403) →
the view → audit (``kapi.auth.audit``) and in-flight release.

Every ``KubernetesView`` is covered, discovery included; only /version and the
health endpoints allow anonymous requests.
"""

from __future__ import annotations

from datetime import UTC, datetime

from rest_framework.permissions import BasePermission

from kapi import errors, ids
from kapi.api.request_info import (
    name_from_field_selector,
    parse_request_path,
    verb_for,
)
from kapi.auth import access, audit
from kapi.auth.attributes import Attributes, forbidden
from kapi.auth.impersonation import impersonate
from kapi.auth.inflight import is_long_running, limiter

__all__ = ["KubernetesAccess", "finish", "request_attributes", "start"]


def request_attributes(request, user, resource_view: bool) -> Attributes:
    """kube's authorizer attributes for an API request."""
    info = parse_request_path(request.path) if resource_view else None
    if info is None:
        return Attributes(user, request.method.lower(), False, path=request.path)
    watch = request.GET.get("watch", "").lower() in ("1", "true")
    verb = verb_for(request.method, info, watch)
    namespace = info.namespace or ""
    name = info.name
    if verb in ("list", "watch") and not name:
        # The value the handler filters by (the last one, as scope.param reads it).
        name = name_from_field_selector(request.GET.get("fieldSelector"))
    if info.resource == "namespaces" and info.namespace is None and info.name:
        namespace = info.name  # kube authorizes a namespace within itself
    return Attributes(
        user,
        verb,
        True,
        namespace,
        info.group,
        info.version,
        info.resource,
        info.subresource,
        name,
    )


def start(request) -> None:
    """Note the arrival time (for the audit event)."""
    raw = request._request
    raw.kapi_received = datetime.now(UTC)


class KubernetesAccess(BasePermission):
    """401 without a user; then impersonation, in-flight limit and RBAC."""

    def has_permission(self, request, view) -> bool:
        raw = request._request
        user = request.user
        if user is None:
            raise errors.unauthorized()
        raw.kapi_user = user
        impersonated = impersonate(user, request.META, access.allowed)
        if impersonated is not None:
            raw.kapi_impersonated = impersonated
            request.user = impersonated
            user = impersonated
        attrs = request_attributes(request, user, getattr(view, "resource_view", False))
        raw.kapi_attrs = attrs
        if not is_long_running(attrs):
            if not limiter().acquire(user.username):
                raise errors.too_many_requests(
                    "Too many requests, please try again later.", retry_after=1
                )
            raw.kapi_inflight = user.username
        if not access.allowed(attrs):
            raw.kapi_decision = "forbid"
            raise forbidden(attrs)
        raw.kapi_decision = "allow"
        return True


def _object_ref(attrs: Attributes, response) -> dict | None:
    if not attrs.resource_request:
        return None
    ref = {"resource": attrs.resource}
    name = attrs.name
    if (
        not name
        and attrs.verb == "create"
        and isinstance(getattr(response, "data", None), dict)
    ):
        name = ((response.data.get("metadata") or {}).get("name")) or ""
    if attrs.namespace:
        ref["namespace"] = attrs.namespace
    if name:
        ref["name"] = name
    ref["apiGroup"] = attrs.api_group
    ref["apiVersion"] = attrs.api_version
    if attrs.subresource:
        ref["subresource"] = attrs.subresource
    return ref


def finish(request, response, resource_view: bool = False) -> None:
    """Release the in-flight slot and write the audit event if one is due.

    A request refused before authorization (401, a refused impersonation) is
    still described as kube's RequestInfo describes it: the kube verb and the
    objectRef come from the path, whoever asked."""
    raw = request._request
    username = getattr(raw, "kapi_inflight", None)
    if username is not None:
        limiter().release(username)
        raw.kapi_inflight = None
    attrs: Attributes | None = getattr(raw, "kapi_attrs", None)
    if attrs is None:
        attrs = request_attributes(
            request, getattr(raw, "kapi_user", None), resource_view
        )
    code = response.status_code
    verb = attrs.verb
    if not audit.should_record(verb, code):
        return
    data = getattr(response, "data", None)
    message = data.get("message", "") if isinstance(data, dict) and code >= 400 else ""
    reason = data.get("reason", "") if isinstance(data, dict) and code >= 400 else ""
    annotations = {}
    decision = getattr(raw, "kapi_decision", None)
    if decision:
        annotations["authorization.k8s.io/decision"] = decision
    forwarded = raw.META.get("HTTP_X_FORWARDED_FOR", "")
    ips = [ip.strip() for ip in forwarded.split(",") if ip.strip()] + [
        raw.META.get("REMOTE_ADDR", "")
    ]
    audit.write(
        audit.event(
            audit_id=getattr(raw, "kapi_request_id", None) or ids.uuid4(),
            received=getattr(raw, "kapi_received", None) or datetime.now(UTC),
            request_uri=raw.get_full_path(),
            verb=verb,
            user=getattr(raw, "kapi_user", None),
            impersonated=getattr(raw, "kapi_impersonated", None),
            source_ips=[ip for ip in ips if ip],
            user_agent=raw.META.get("HTTP_USER_AGENT", ""),
            object_ref=_object_ref(attrs, response),
            code=code,
            message=message,
            reason=reason,
            annotations=annotations,
        )
    )
