"""Django's browser middlewares, stepped over on Kubernetes API paths.

Sessions, CSRF, Django users, messages, static files and the browser security
headers serve the admin UI (and /static, /git/, /hooks/); an API request uses
none of them (bearer tokens, DRF views exempt from CSRF) but paid for all seven
on every call. Each class here is the Django middleware itself (so Django's
admin checks still find them in ``MIDDLEWARE``), whose request, view and
response hooks run only for paths outside the API.

``KubernetesAPIMiddleware`` sets what API responses still need from the chain:
``Content-Length`` (else uvicorn would chunk every response) and
``X-Content-Type-Options: nosniff`` (as kube-apiserver sends it).
"""

from __future__ import annotations

from django.contrib.auth import middleware as auth
from django.contrib.messages import middleware as messages
from django.contrib.sessions import middleware as sessions
from django.middleware import clickjacking, common, csrf, security
from whitenoise import middleware as whitenoise

from kapi.api.middleware import is_api_path

__all__ = [
    "AuthenticationMiddleware",
    "CommonMiddleware",
    "CsrfViewMiddleware",
    "MessageMiddleware",
    "SecurityMiddleware",
    "SessionMiddleware",
    "WhiteNoiseMiddleware",
    "XFrameOptionsMiddleware",
]


def browser_only(middleware: type) -> type:
    """A subclass of ``middleware`` that lets API requests straight through."""

    def __call__(self, request):
        if is_api_path(request.path):
            return self.get_response(request)
        return middleware.__call__(self, request)

    namespace: dict = {"__call__": __call__, "__module__": __name__, "__doc__": middleware.__doc__}
    if hasattr(middleware, "process_view"):

        def process_view(self, request, view, args, kwargs):
            if is_api_path(request.path):
                return None
            return middleware.process_view(self, request, view, args, kwargs)

        namespace["process_view"] = process_view
    if hasattr(middleware, "process_exception"):

        def process_exception(self, request, exception):
            if is_api_path(request.path):
                return None
            return middleware.process_exception(self, request, exception)

        namespace["process_exception"] = process_exception
    if hasattr(middleware, "process_template_response"):

        def process_template_response(self, request, response):
            if is_api_path(request.path):
                return response
            return middleware.process_template_response(self, request, response)

        namespace["process_template_response"] = process_template_response
    return type(middleware.__name__, (middleware,), namespace)


SecurityMiddleware = browser_only(security.SecurityMiddleware)
WhiteNoiseMiddleware = browser_only(whitenoise.WhiteNoiseMiddleware)
SessionMiddleware = browser_only(sessions.SessionMiddleware)
CommonMiddleware = browser_only(common.CommonMiddleware)
CsrfViewMiddleware = browser_only(csrf.CsrfViewMiddleware)
AuthenticationMiddleware = browser_only(auth.AuthenticationMiddleware)
MessageMiddleware = browser_only(messages.MessageMiddleware)
XFrameOptionsMiddleware = browser_only(clickjacking.XFrameOptionsMiddleware)
