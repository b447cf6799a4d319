"""HTTP endpoints of the sync: git smart HTTP for hosted repositories, webhooks.

``/git/<namespace>/<name>.git/...`` runs git's own ``git http-backend`` (CGI)
for a GitRepository without ``spec.url``: clone, fetch and push with the API
bearer token, as the password of HTTP basic auth (any user name) or as
``Authorization: Bearer``. Without a valid token: 401 with
``WWW-Authenticate: Basic realm="kapi"`` (git sends credentials only after
that challenge). The pre-receive hook validates a push: it posts the ref
updates to ``/hooks/pre-receive/<namespace>/<name>`` with the pusher's token,
and this process runs ``sync.prereceive.check_push`` (no Django boot per
push). An accepted push asks for the repository to be reconciled at once.

``/hooks/git/<namespace>/<name>`` accepts forge webhooks authenticated by the
Secret named in ``spec.webhookSecretRef`` (key ``token``): GitHub's
``X-Hub-Signature-256``, Gitea's ``X-Gitea-Signature`` (HMAC-SHA256 of the
body) or GitLab's ``X-Gitlab-Token``; it triggers an immediate fetch.

Both answer like git and the forges expect, not with Kubernetes ``Status``
objects (``kapi.api.middleware`` leaves these paths alone).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import json
import os
import subprocess

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from kapi import errors
from kapi.auth import access
from kapi.registry.store import Registry
from kapi.runtime import config
from sync import gitstore, queue
from sync.api import repository_type
from sync.hookerrors import refusing

__all__ = ["git_http", "pre_receive", "webhook"]

_SERVICES = ("git-upload-pack", "git-receive-pack")


def _token(request: HttpRequest) -> str:
    """The bearer token, or the password of HTTP basic auth."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer":
        return value.strip()
    if scheme.lower() == "basic":
        try:
            return base64.b64decode(value.strip()).decode().partition(":")[2]
        except (ValueError, UnicodeDecodeError):
            return ""
    return ""


def _user(request: HttpRequest):
    """The API user of the request's token (any authenticator the API accepts)."""
    from kapi.auth.authenticator import authenticate_token

    token = _token(request)
    return authenticate_token(token) if token else None


def _hook_env(request: HttpRequest, namespace: str, name: str) -> dict[str, str]:
    """How the pre-receive hook reaches this server: the socket the push came in
    on, the pusher's own token (in the hook's environment only) and our CA."""
    from kapi.runtime.certs import tls_files

    host = request.META.get("SERVER_NAME") or "127.0.0.1"
    if ":" in host:
        host = f"[{host}]"
    scheme = "https" if request.is_secure() else "http"
    port = request.META.get("SERVER_PORT") or ("443" if scheme == "https" else "80")
    env = {
        "KAPI_PRERECEIVE_URL": f"{scheme}://{host}:{port}/hooks/pre-receive/{namespace}/{name}",
        "KAPI_PUSH_TOKEN": _token(request),
    }
    ca = tls_files(config.data_dir()).ca_cert
    if ca.is_file():
        env["KAPI_CA_FILE"] = str(ca)
    return env


def _challenge() -> HttpResponse:
    response = HttpResponse("Unauthorized\n", status=401, content_type="text/plain")
    response["WWW-Authenticate"] = 'Basic realm="kapi"'
    return response


def _hosted(namespace: str, name: str) -> dict | None:
    try:
        repo = Registry().get(repository_type(), namespace, name)
    except errors.StatusError:
        return None
    if (repo.get("spec") or {}).get("url") or repo["metadata"].get("deletionTimestamp"):
        return None
    return repo


@csrf_exempt
def git_http(request: HttpRequest, namespace: str, name: str, rest: str) -> HttpResponse:
    user = _user(request)
    if user is None:
        return _challenge()
    repo = _hosted(namespace, name)
    if repo is None:
        return HttpResponse("repository not found\n", status=404, content_type="text/plain")
    service = request.GET.get("service") or rest.rsplit("/", 1)[-1]
    if service not in _SERVICES and not rest.startswith(("info/", "HEAD", "objects/")):
        return HttpResponse("not found\n", status=404, content_type="text/plain")
    # Clone and fetch need get on the GitRepository, push needs update (RBAC).
    verb = "update" if service == "git-receive-pack" else "get"
    try:
        access.check(user, verb, repository_type(), namespace, name)
    except errors.StatusError as exc:
        return HttpResponse(exc.status["message"] + "\n", status=403, content_type="text/plain")
    branch = ((repo.get("spec") or {}).get("ref") or {}).get("branch") or "main"
    gitstore.ensure_hosted(namespace, name, branch)
    env = {
        **os.environ,
        "GIT_PROJECT_ROOT": str(gitstore.hosted_root()),
        "GIT_HTTP_EXPORT_ALL": "1",
        "PATH_INFO": f"/{namespace}/{name}.git/{rest}",
        "REQUEST_METHOD": request.method or "GET",
        "QUERY_STRING": request.META.get("QUERY_STRING", ""),
        "CONTENT_TYPE": request.META.get("CONTENT_TYPE", ""),
        "REMOTE_USER": user.username,
        "REMOTE_ADDR": request.META.get("REMOTE_ADDR", ""),
        "KAPI_DATA_DIR": str(config.data_dir()),
        "KAPI_PUSH_USER": user.username,
    }
    if service == "git-receive-pack":
        env.update(_hook_env(request, namespace, name))
    for header in ("HTTP_CONTENT_ENCODING", "HTTP_GIT_PROTOCOL"):
        if header in request.META:
            env[header] = request.META[header]
    body = request.read() if request.method == "POST" else b""
    env["CONTENT_LENGTH"] = str(len(body))
    done = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True)
    head, _, payload = done.stdout.partition(b"\r\n\r\n")
    if not _:
        head, _, payload = done.stdout.partition(b"\n\n")
    status = 200
    headers: list[tuple[str, str]] = []
    for line in head.decode("latin-1").splitlines():
        key, _, value = line.partition(":")
        if key.lower() == "status":
            status = int(value.strip().split()[0])
        elif key:
            headers.append((key.strip(), value.strip()))
    response = HttpResponse(payload, status=status)
    for key, value in headers:
        response[key] = value
    if service == "git-receive-pack" and request.method == "POST" and status == 200:
        # Accepted (or partly): fetch the new revision and reconcile its Syncs now.
        queue.request(queue.REPOSITORY, namespace, name, "push")
    return response


@csrf_exempt
@refusing
def pre_receive(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    """Validate-on-push for the hook (``sync.prereceive_hook``), in this warm
    process: the pusher's token, ``update`` on the GitRepository as for the
    push itself, and the push's quarantine directory inside that repository.
    Any failure is a refusal with one readable line (``sync.hookerrors``)."""
    if request.method != "POST":
        return JsonResponse({"message": "POST only"}, status=405)
    user = _user(request)
    if user is None:
        return _challenge()
    repo = _hosted(namespace, name)
    if repo is None:
        return JsonResponse({"message": "repository not found"}, status=404)
    try:
        access.check(user, "update", repository_type(), namespace, name)
    except errors.StatusError as exc:
        return JsonResponse({"message": exc.status["message"]}, status=403)
    try:
        body = json.loads(request.body)
        updates = [str(line) for line in body.get("updates") or []]
        quarantine = str(body.get("quarantine") or "")
    except (ValueError, AttributeError):
        return JsonResponse({"message": "expected {updates: [...], quarantine: path}"}, status=400)
    git_env = gitstore.quarantine_env(gitstore.hosted_path(namespace, name), quarantine)
    if git_env is None:
        return JsonResponse({"message": f"quarantine {quarantine!r} is not inside the repository"}, status=400)
    from sync.prereceive import check_push

    out = io.StringIO()
    accepted = check_push(namespace, name, updates, out, git_env)
    return JsonResponse({"accepted": accepted, "messages": out.getvalue().splitlines()})


def _secret_token(repo: dict) -> str | None:
    from sync.source import secret_data

    ref = ((repo.get("spec") or {}).get("webhookSecretRef") or {}).get("name")
    if not ref:
        return None
    try:
        return secret_data(repo["metadata"]["namespace"], ref).get("token")
    except errors.StatusError:
        return None


def _signed(secret: str, body: bytes, signature: str) -> bool:
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(signature.removeprefix("sha256="), digest)


@csrf_exempt
def webhook(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    if request.method != "POST":
        return JsonResponse({"message": "POST only"}, status=405)
    try:
        repo = Registry().get(repository_type(), namespace, name)
    except errors.StatusError:
        return JsonResponse({"message": "not found"}, status=404)
    secret = _secret_token(repo)
    if not secret:
        return JsonResponse({"message": "no webhook secret configured"}, status=403)
    body = request.read()
    meta = request.META
    ok = False
    if "HTTP_X_HUB_SIGNATURE_256" in meta:
        ok = _signed(secret, body, meta["HTTP_X_HUB_SIGNATURE_256"])
    elif "HTTP_X_GITEA_SIGNATURE" in meta:
        ok = _signed(secret, body, meta["HTTP_X_GITEA_SIGNATURE"])
    elif "HTTP_X_GITLAB_TOKEN" in meta:
        ok = hmac.compare_digest(meta["HTTP_X_GITLAB_TOKEN"], secret)
    if not ok:
        return JsonResponse({"message": "signature or token does not match"}, status=401)
    queue.request(queue.REPOSITORY, namespace, name, "webhook")
    return JsonResponse({"message": "fetch requested"}, status=202)
