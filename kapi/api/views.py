"""The HTTP edge: views that decode requests and hand them to ``kapi.handlers``.

Discovery, OpenAPI, /version and the health checks are DRF views; the
resource view, which serves nearly every request, runs its request cycle in
``kapi.api.dispatch`` (the same steps, without DRF's per-request machinery).
"""

from __future__ import annotations

import platform
import sys

from django.db import connection
from django.http import HttpResponse, StreamingHttpResponse
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from kapi import errors
from kapi.api import discovery, dispatch, filters, protobuf_negotiation
from kapi.api.negotiation import negotiate_output
from kapi.api.renderers import wants_pretty
from kapi.api.request_info import parse_request_path, verb_for
from kapi.api.transforms import OBJECT_TRANSFORMS, apply_transform
from kapi.api.warning import warning_value
from kapi.auth.access import registry_for
from kapi.auth.rbac import RBAC_GROUP
from kapi.handlers import patch, read, reviews, scale, write
from kapi.handlers.scope import RequestScope, Result
from kapi.registry.catalog import catalog
from kapi.registry.definitions import KUBERNETES_SCHEMA_VERSION
from kapi.registry.store import Registry

__all__ = [
    "APIGroupView",
    "APIResourceListView",
    "APIRootView",
    "HealthView",
    "ResourceView",
    "VersionView",
]

NOT_FOUND = "the server could not find the requested resource"

def _kubernetes_version() -> dict[str, str]:
    """/version, truthfully: the Kubernetes release kapi serves and validates
    against (``KUBERNETES_SCHEMA_VERSION``), built by kapi rather than by Go: no
    Go version, CPython as the compiler, the platform it runs on."""
    major, minor, _ = KUBERNETES_SCHEMA_VERSION.lstrip("v").split(".", 2)
    machine = platform.machine().lower()
    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(machine, machine)
    return {
        "major": major,
        "minor": minor,
        "emulationMajor": major,
        "emulationMinor": minor,
        "minCompatibilityMajor": major,
        "minCompatibilityMinor": str(int(minor) - 1),
        "gitVersion": f"{KUBERNETES_SCHEMA_VERSION}+kapi",
        "gitCommit": "",
        "gitTreeState": "",
        "buildDate": "",
        "goVersion": "",
        "compiler": "cpython",
        "platform": f"{sys.platform}/{arch}",
    }


KUBERNETES_VERSION = _kubernetes_version()

_registry: Registry | None = None


def registry() -> Registry:
    global _registry
    if _registry is None:
        _registry = Registry()
    return _registry


def _not_found() -> errors.StatusError:
    return errors.StatusError(errors.status_failure(404, "NotFound", NOT_FOUND))


class HeadIsGet:
    """HEAD answered as GET, as Django's ``View.setup`` makes it for a view
    without ``head``: by storing the bound ``get`` on the view, a reference
    cycle per request that only the cyclic garbage collector frees (with the
    view, the request and everything they hold)."""

    def head(self, request, *args, **kwargs):
        return self.get(request, *args, **kwargs)


class KubernetesView(HeadIsGet, APIView):
    """Base: negotiate the output before anything can fail, so errors are encoded
    the way the client asked."""

    transforms: tuple = ()
    #: Whether the endpoint may answer protobuf (ResourceView narrows it per kind).
    protobuf = False
    #: Whether request paths name resources (else they are non-resource URLs to RBAC).
    resource_view = False

    def initial(self, request, *args, **kwargs):
        filters.start(request)
        try:
            request.kapi_output = negotiate_output(
                request.META.get("HTTP_ACCEPT"), self.transforms, self.protobuf
            )
        except errors.StatusError:
            request.kapi_output = None
            super().initial(request, *args, **kwargs)
            raise
        super().initial(request, *args, **kwargs)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        filters.finish(request, response, self.resource_view)
        output = getattr(request, "kapi_output", None)
        if isinstance(response, Response) and output is not None and response.content_type is None:
            response.content_type = output.content_type_for(response.status_code)
        return response


class VersionView(KubernetesView):
    authentication_classes: list = []
    permission_classes = [AllowAny]

    def get(self, request):
        return Response(KUBERNETES_VERSION)


class HealthView(HeadIsGet, APIView):
    """/healthz, /livez, /readyz: plain "ok"; readyz also checks the database."""

    authentication_classes: list = []
    permission_classes = [AllowAny]
    check_database = False

    def get(self, request, **kwargs):
        if self.check_database:
            try:
                with connection.cursor() as cur:
                    cur.execute("SELECT 1")
            except Exception:  # noqa: BLE001 - any failure means not ready
                return HttpResponse("[-]database failed\nreadyz check failed\n", status=500, content_type="text/plain")
        return HttpResponse("ok", content_type="text/plain; charset=utf-8")


class APIRootView(KubernetesView):
    """/api and /apis, legacy or aggregated by negotiation."""

    transforms = discovery.AGGREGATED_TRANSFORMS
    # Legacy discovery documents are protobuf messages (meta.v1); the aggregated
    # APIGroupDiscoveryList stays JSON (negotiation skips it for protobuf).
    protobuf = True
    legacy = True

    def get(self, request):
        output = request.kapi_output
        if output.transform is not None:
            body = discovery.aggregated_discovery(catalog(fresh=True), self.legacy, output.transform[2])
            response = Response(body)
            response["Vary"] = "Accept"
            return response
        if self.legacy:
            return Response(discovery.api_versions(request.get_host()))
        return Response(discovery.api_group_list(catalog(fresh=True)))


class APIGroupView(KubernetesView):
    protobuf = True

    def get(self, request, group):
        body = discovery.api_group(catalog(fresh=True), group)
        if body is None:
            raise _not_found()
        return Response(body)


class APIResourceListView(KubernetesView):
    protobuf = True

    def get(self, request, version, group=""):
        body = discovery.api_resource_list(catalog(fresh=True), group, version)
        if body is None:
            raise _not_found()
        return Response(body)


_OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


class OpenAPIView(KubernetesView):
    """/openapi/v2 and /openapi/v3[/PATH], with ETags so clients can cache.

    client-go asks for v2 only as protobuf (gnostic ``openapi_v2.Document``, see
    ``kapi.protobuf.openapiv2``): kubectl ``explain --output=plaintext-openapiv2``
    and kubectl's fallback for kinds missing from its v3 index read it."""

    def initial(self, request, *args, **kwargs):
        if kwargs.get("version") == "v2" and _OPENAPI_V2_PROTOBUF in request.META.get("HTTP_ACCEPT", ""):
            request.kapi_output = None
            return APIView.initial(self, request, *args, **kwargs)
        return super().initial(request, *args, **kwargs)

    def get(self, request, version, path=""):
        from kapi.api import openapi

        if version == "v2" and request.kapi_output is None:
            import hashlib

            data = openapi.openapi_v2_protobuf(catalog(fresh=True))
            etag = '"' + hashlib.sha256(data).hexdigest()[:32].upper() + '"'
            if request.META.get("HTTP_IF_NONE_MATCH") == etag:
                return HttpResponse(status=304)
            # kube-openapi answers with this spelling of the type (a dot for the "@").
            response = HttpResponse(
                data, content_type="application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
            )
            response["ETag"] = etag
            response["Cache-Control"] = "no-cache, private"
            return response
        if version == "v2":
            body = openapi.openapi_v2(catalog(fresh=True))
        elif not path:
            body = openapi.openapi_v3_index(catalog(fresh=True))
        else:
            parts = path.strip("/").split("/")
            if parts[0] == "api" and len(parts) == 2:
                body = openapi.openapi_v3_document(catalog(), "", parts[1])
            elif parts[0] == "apis" and len(parts) == 3:
                body = openapi.openapi_v3_document(catalog(), parts[1], parts[2])
            else:
                body = None
        if body is None:
            raise _not_found()
        import hashlib

        from kapi.api.renderers import dump_json

        etag = '"' + hashlib.sha256(dump_json(body)).hexdigest()[:32].upper() + '"'
        if request.META.get("HTTP_IF_NONE_MATCH") == etag:
            return HttpResponse(status=304)
        response = Response(body)
        response["ETag"] = etag
        response["Cache-Control"] = "no-cache, private" if not request.GET.get("hash") else "public, immutable"
        return response


class ResourceView(KubernetesView):
    """Every resource URL: /api/v1/..., /apis/GROUP/VERSION/..."""

    transforms = OBJECT_TRANSFORMS
    protobuf = True
    resource_view = True

    def dispatch(self, request, *args, **kwargs):
        """The methods that serve resources run ``kapi.api.dispatch``'s lean
        cycle; any other (OPTIONS, TRACE) DRF's own."""
        if request.method not in dispatch.METHODS:
            return super().dispatch(request, *args, **kwargs)
        return dispatch.serve(self, request, args, kwargs)

    def get(self, request, **kwargs):
        return self._serve(request)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        return self.finish_response(request, response)

    @staticmethod
    def finish_response(request, response):
        """A deprecated custom resource version warns on every request to it,
        failed ones included (kube's crdHandler adds the warning first)."""
        deprecation = getattr(request, "kapi_deprecation", None)
        if deprecation:
            warning = warning_value(deprecation)
            current = response.get("Warning")
            response["Warning"] = f"{warning}, {current}" if current else warning
        return response

    def post(self, request, **kwargs):
        return self._serve(request)

    def put(self, request, **kwargs):
        return self._serve(request)

    def patch(self, request, **kwargs):
        return self._serve(request)

    def delete(self, request, **kwargs):
        return self._serve(request)

    def _serve(self, request):
        info = parse_request_path(request.path)
        if info is None:
            raise _not_found()
        rt = catalog().lookup(info.group, info.version, info.resource)
        if rt is None or "crd" in rt.extra:
            # Unknown here may be a CRD another process just created; a custom
            # resource request must see its CRD as it is now (schema, deletion).
            rt = catalog(fresh=True).lookup(info.group, info.version, info.resource)
        if rt is None:
            raise _not_found()
        request.kapi_deprecation = rt.extra.get("deprecation_warning")
        if info.namespace is not None and not rt.namespaced:
            raise _not_found()
        if info.subresource and rt.subresource(info.subresource) is None:
            raise _not_found()
        watch = request.GET.get("watch", "").lower() in ("1", "true")
        verb = verb_for(request.method, info, watch)
        if rt.namespaced and info.namespace is None and verb not in ("list", "watch"):
            raise _not_found()
        if not info.subresource and (
            (verb in ("update", "patch") and not info.name) or (verb == "create" and info.name)
        ):
            # No route serves it (kube registers PUT and PATCH on objects, POST on
            # collections): go-restful's 405.
            raise errors.method_not_allowed()
        allowed = rt.subresource(info.subresource).verbs if info.subresource else rt.verbs
        if verb not in allowed and not (verb in ("list", "watch") and "list" in allowed):
            # kube registers routes only for the verbs a resource serves.
            raise errors.method_not_allowed()
        # Before any write, as kube negotiates before it acts.
        protobuf_negotiation.narrow(self, request, rt, info.subresource)

        scope = RequestScope(
            resource=rt,
            namespace=info.namespace,
            name=info.name,
            subresource=info.subresource,
            user=request.user,
            query=request.GET,
            user_agent=request.META.get("HTTP_USER_AGENT", ""),
        )
        result = self._handle(verb, scope, request)
        if isinstance(result, StreamingHttpResponse):  # watch
            return result
        body = result.body
        output = request.kapi_output
        if result.transformable and output.transform is not None:
            body = apply_transform(rt, body, output.transform, request.GET.get("includeObject"))
        answer = dispatch.Answer(body, result.status)
        if result.warnings:
            # One header value per warning, joined as Go's net/http would fold
            # repeated headers; kubectl splits them back.
            answer.headers["Warning"] = ", ".join(warning_value(w) for w in result.warnings)
        return answer

    def _handle(self, verb: str, scope: RequestScope, request) -> Result | StreamingHttpResponse:
        reg = registry()
        if scope.resource.extra.get("virtual"):
            return reviews.create(scope, request.data)
        if scope.subresource == "token":
            return reviews.token_request(scope, reg, request.data)
        if scope.resource.group == RBAC_GROUP:
            reg = registry_for(request.user, reg.storage)
        if scope.subresource == "scale":
            if verb == "get":
                return scale.get(scope, reg)
            if verb == "update":
                return scale.update(scope, reg, request.data)
            if verb == "patch":
                content_type = request.META.get("CONTENT_TYPE", "")
                return scale.patch(scope, reg, request._request.body, content_type)
        if verb == "get":
            return read.get(scope, reg)
        if verb == "list":
            output = request.kapi_output
            plain = output.encoding == "json" and output.transform is None and not wants_pretty(request)
            return read.list_(scope, reg, encoded=plain)
        if verb == "watch":
            from kapi.api.watch import serve_watch  # streaming lives on its own

            return serve_watch(scope, reg, request)
        if verb == "create":
            return write.create(scope, reg, request.data)
        if verb == "update":
            return write.update(scope, reg, request.data)
        if verb == "patch":
            return patch.patch(scope, reg, request.data)
        if verb == "delete":
            return write.delete(scope, reg, request.data or None)
        if verb == "deletecollection":
            return write.delete_collection(scope, reg, request.data or None)
        raise errors.method_not_supported(scope.resource.group, scope.resource.plural, verb)
