"""Django middleware for the API paths: errors as ``Status``, body limit, gzip.

Anything that fails outside a DRF view (an unknown URL, an oversized body,
a bug) still answers with a Kubernetes ``Status``, never an HTML page.
"""

from __future__ import annotations

import gzip

from django.http import HttpResponse
from django.views import defaults

from kapi import errors
from kapi.api.parsers import MAX_BODY_BYTES
from kapi.api.renderers import dump_json

__all__ = ["KubernetesAPIMiddleware", "is_api_path", "not_found_handler", "status_response"]

#: kube compresses responses above this size (``defaultGzipThresholdBytes``).
GZIP_THRESHOLD = 128 * 1024
#: ... at level 1 (``defaultGzipContentEncodingLevel``): a list of 10,000
#: ConfigMaps of 1 KiB (15 MB) took 139 ms of CPU to compress at 1 and 308 ms
#: at 4, for 6.6 against 6.4 MB.
GZIP_LEVEL = 1


def is_api_path(path: str) -> bool:
    # /git/ and /hooks/ answer as git and the forges expect (the sync app).
    return not path.startswith(("/admin", "/static", "/git/", "/hooks/"))


def status_response(error: errors.StatusError) -> HttpResponse:
    response = HttpResponse(dump_json(error.status), status=error.code, content_type="application/json")
    for name, value in error.headers.items():
        response[name] = value
    return response


def not_found_handler(request, exception=None):
    if is_api_path(request.path):
        return status_response(
            errors.StatusError(
                errors.status_failure(404, "NotFound", "the server could not find the requested resource")
            )
        )
    return defaults.page_not_found(request, exception)


class KubernetesAPIMiddleware:
    sync_capable = True
    async_capable = False

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not is_api_path(request.path):
            return self.get_response(request)
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > MAX_BODY_BYTES:
            response = status_response(
                errors.request_entity_too_large(f"Request entity too large: limit is {MAX_BODY_BYTES}")
            )
        else:
            response = self._compress(request, self.get_response(request))
        if not getattr(response, "streaming", False):
            # What Django's CommonMiddleware and SecurityMiddleware set, which
            # API requests step over (kapi.api.browser_only).
            if not response.has_header("Content-Length"):
                response["Content-Length"] = str(len(response.content))
            response.headers.setdefault("X-Content-Type-Options", "nosniff")
        return response

    def process_exception(self, request, exception):
        if not is_api_path(request.path):
            return None
        from kapi.api.exceptions import to_status_error

        return status_response(to_status_error(exception))

    @staticmethod
    def _compress(request, response):
        if getattr(response, "streaming", False) or response.has_header("Content-Encoding"):
            return response
        if "gzip" not in request.META.get("HTTP_ACCEPT_ENCODING", ""):
            return response
        made = len(response.content)
        if made < GZIP_THRESHOLD:
            return response
        # What the answer was before compression: the bridge trims the heap
        # after an answer that was big to make, however small it went out.
        response.kapi_made_bytes = made
        response.content = gzip.compress(response.content, compresslevel=GZIP_LEVEL)
        response["Content-Encoding"] = "gzip"
        response["Content-Length"] = str(len(response.content))
        vary = response.get("Vary")
        response["Vary"] = f"{vary}, Accept-Encoding" if vary else "Accept-Encoding"
        return response
