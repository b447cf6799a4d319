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

``git push -o wait`` (``sync.pushoptions``): the push's options are read
before git starts; a bad value is refused there, and a push that waits has
its tracked ref updated by the ``proc-receive`` hook (``sync.pushwait_hook``),
which asks ``/hooks/push-wait/<namespace>/<name>`` (``push_wait``, the
pusher's token) where the Syncs stand until they are done (``sync.pushwait``).

``git http-backend`` runs streamed and bounded (``sync.gitbackend``: push size
limit, timeout, concurrency). RBAC is checked before the repository is looked
up, so a user who may not see a repository cannot tell whether it exists.

``/hooks/git/<namespace>/<name>`` accepts forge webhooks authenticated by the
Secret named in ``spec.webhookSecretRef`` (key ``token``): GitHub's
``X-Hub-Signature-256``, Gitea's ``X-Gitea-Signature`` (HMAC-SHA256 of the
body) or GitLab's ``X-Gitlab-Token``; it triggers an immediate fetch. A
missing repository, a missing secret and a bad signature answer the same 401.

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
import threading

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from kapi import errors
from kapi.auth import access
from kapi.registry.store import Registry
from kapi.runtime import config
from sync import controllers, gitbackend, gitstore, pushoptions
from sync.hookerrors import refusing
from sync.kinds import repository_type

__all__ = ["git_http", "pre_receive", "push_wait", "webhook"]

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
        "KAPI_PUSH_WAIT_URL": f"{scheme}://{host}:{port}/hooks/push-wait/{namespace}/{name}",
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
    service = request.GET.get("service") or rest.rsplit("/", 1)[-1]
    if service not in _SERVICES and not rest.startswith(("info/", "HEAD", "objects/")):
        return HttpResponse("not found\n", status=404, content_type="text/plain")
    # Clone and fetch need get on the GitRepository, push needs update (RBAC).
    # Authorized before looked up, as kube-apiserver: whoever may not see the
    # repository learns nothing of whether it exists.
    verb = "update" if service == "git-receive-pack" else "get"
    try:
        access.check(user, verb, repository_type(), namespace, name)
    except errors.StatusError as exc:
        return HttpResponse(exc.status["message"] + "\n", status=403, content_type="text/plain")
    repo = _hosted(namespace, name)
    if repo is None:
        return HttpResponse("repository not found\n", status=404, content_type="text/plain")
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
    push = service == "git-receive-pack"
    if push:
        env.update(_hook_env(request, namespace, name))
        # Let pushes carry options (git push -o), for -o wait.
        env = pushoptions.git_config(env, {"receive.advertisePushOptions": "true"})
    for header in ("HTTP_CONTENT_ENCODING", "HTTP_GIT_PROTOCOL"):
        if header in request.META:
            env[header] = request.META[header]

    def pushed(status: int) -> None:
        if push and request.method == "POST" and status == 200:
            # Accepted (or partly): fetch the new revision and reconcile its Syncs now.
            controllers.request(controllers.REPOSITORY, namespace, name, "push")

    def prepare(head: bytes) -> gitbackend.PushSetup:
        return _wait_setup(repo, head, request.META.get("HTTP_CONTENT_ENCODING", "").endswith("gzip"), env)

    return gitbackend.serve(request, env, push=push, on_done=pushed, prepare=prepare)


def _wait_setup(repo: dict, head: bytes, gzipped: bool, git_env: dict[str, str]) -> gitbackend.PushSetup:
    """How git runs a push, from its options: as usual without ``-o wait``;
    with it, the tracked ref goes to the ``proc-receive`` hook, which waits
    for the outcome (``sync.pushwait_hook``) holding one of this process's
    wait slots; a bad value, or no free slot, refuses the push at once.
    ``git_env``: the environment git would run in (its config is added to)."""
    _, _, options = gitbackend.request_head(head, gzipped)
    try:
        wait = pushoptions.wait_of(options)
    except pushoptions.PushOptionError as exc:
        return gitbackend.PushSetup(refusal=(f"kapi: push refused: {exc}", "invalid -o wait"))
    if wait is None:
        return gitbackend.PushSetup()
    ref = pushoptions.tracked_ref(repo)
    refs, caps = gitbackend.commands(head, gzipped)
    if "atomic" in caps and len(refs) > 1:
        # The hook moves the tracked ref before git moves the others: not atomic.
        return gitbackend.PushSetup(refusal=(
            "kapi: push refused: -o wait cannot be combined with --atomic for several refs",
            "-o wait with --atomic"))
    if ref is None or ref not in refs:
        # Nothing to wait for: said by the pre-receive hook (sync.prereceive_hook).
        meta = repo["metadata"]
        what = (f"GitRepository {meta['namespace']}/{meta['name']} is pinned to a commit, which no push moves"
                if ref is None else f"this push does not update {ref}, which the Syncs follow")
        return gitbackend.PushSetup(env={"KAPI_PUSH_NOTE": f"kapi: -o wait: {what}; nothing to wait for"})
    release = pushoptions.take_wait_slot()
    if release is None:
        from django.conf import settings

        return gitbackend.PushSetup(refusal=(
            f"kapi: push refused: this server is already waiting for {settings.SYNC_PUSH_WAITS} pushes "
            "(KAPI_SYNC_PUSH_WAITS); nothing was changed: push again in a moment, or without -o wait",
            "too many waiting pushes"))
    env = pushoptions.git_config(git_env, {"receive.procReceiveRefs": f"am:{ref}"})
    env.update(KAPI_PUSH_WAIT_REF=ref, KAPI_PUSH_WAIT_SECONDS=f"{wait.seconds:g}", KAPI_PUSH_WAIT_NOTE=wait.note)
    return gitbackend.PushSetup(env=env, extra_seconds=wait.seconds, release=release)


#: The largest pre-receive request (ref updates and a path) and forge webhook body.
MAX_HOOK_BODY = 1 << 20
MAX_WEBHOOK_BODY = 25 << 20  # GitHub's own cap on payloads


def _read_capped(request: HttpRequest, cap: int) -> bytes | None:
    """The request body, or None past ``cap`` bytes (read no further)."""
    stream = request if request.META.get("CONTENT_LENGTH") else request.META["wsgi.input"]
    data = bytearray()
    while piece := stream.read(65536):
        data += piece
        if len(data) > cap:
            return None
    return bytes(data)


_validations_lock = threading.Lock()
_validations: list[threading.BoundedSemaphore] = []


def _validation_slot() -> threading.BoundedSemaphore:
    """Push-time validations at once in this API process (``KAPI_SYNC_PUSH_VALIDATIONS``):
    each renders and dry-runs a revision inside a request thread."""
    from django.conf import settings

    with _validations_lock:
        if not _validations:
            _validations.append(threading.BoundedSemaphore(max(1, int(settings.SYNC_PUSH_VALIDATIONS))))
        return _validations[0]


def _hook_call(request: HttpRequest, namespace: str, name: str, shape: str):
    """What both git hooks' endpoints check first: a POST by a pusher with
    ``update`` on the hosted GitRepository, with a JSON object body (at most
    ``MAX_HOOK_BODY``) naming the push's ref ``updates``. Returns (user,
    updates, body), or the refusal to answer."""
    if request.method != "POST":
        return JsonResponse({"message": "POST only"}, status=405)
    user = _user(request)
    if user is None:
        return _challenge()
    try:
        access.check(user, "update", repository_type(), namespace, name)
    except errors.StatusError as exc:
        return JsonResponse({"message": exc.status["message"]}, status=403)
    if _hosted(namespace, name) is None:
        return JsonResponse({"message": "repository not found"}, status=404)
    raw = _read_capped(request, MAX_HOOK_BODY)
    try:
        if raw is None:
            raise ValueError("too large")
        body = json.loads(raw)
        updates = [str(line) for line in body.get("updates") or []]
    except (ValueError, AttributeError):
        return JsonResponse({"message": f"expected {shape}"}, status=400)
    return user, updates, body


@csrf_exempt
@refusing
def pre_receive(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    """Validate-on-push for the hook (``sync.prereceive_hook``), in this warm
    process: the pusher's token, ``update`` on the GitRepository as for the
    push itself, and the push's quarantine directory inside that repository.
    Any failure is a refusal with one readable line (``sync.hookerrors``).
    At most ``KAPI_SYNC_PUSH_VALIDATIONS`` run at once; a push that finds no
    slot within a minute is refused with a line saying so."""
    called = _hook_call(request, namespace, name, "{updates: [...], quarantine: path}")
    if isinstance(called, HttpResponse):
        return called
    _, updates, body = called
    quarantine = str(body.get("quarantine") or "")
    git_env = gitstore.quarantine_env(gitstore.hosted_path(namespace, name), quarantine)
    if git_env is None:
        return JsonResponse({"message": f"quarantine {quarantine!r} is not inside the repository"}, status=400)
    from sync.prereceive import check_push

    slot = _validation_slot()
    if not slot.acquire(timeout=60):
        return JsonResponse({"accepted": False, "messages": [
            "kapi: push rejected: the server is busy validating other pushes; try again"]})
    out = io.StringIO()
    try:
        accepted = check_push(namespace, name, updates, out, git_env)
    except gitstore.GitError as exc:
        # e.g. a tree over the checkout limits: a clear line, not a 500.
        out.write(f"kapi: push rejected: {exc}\n")
        accepted = False
    finally:
        slot.release()
    return JsonResponse({"accepted": accepted, "messages": out.getvalue().splitlines()})


@csrf_exempt
@refusing
def push_wait(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    """Where the Syncs stand with a pushed revision, for the ``proc-receive``
    hook of a push made with ``-o wait`` (``sync.pushwait_hook``): the pusher's
    token, ``update`` on the GitRepository as for the push itself; the body
    names the ref updates (already made) and, on the first call, ``start``
    asks for the repository to be fetched and its Syncs reconciled now. One
    short answer per call (``sync.pushwait.outcome``): the hook asks again."""
    called = _hook_call(request, namespace, name, "{updates: [...], start: bool}")
    if isinstance(called, HttpResponse):
        return called
    user, updates, body = called
    start = body.get("start") is True
    from sync.pushwait import outcome

    if start:
        controllers.request(controllers.REPOSITORY, namespace, name, "push")
    result = outcome(namespace, name, updates, user)
    return JsonResponse({"lines": result.lines, "done": result.done, "pending": result.pending,
                         "failed": result.failed})


def _secret_token(namespace: str, name: str) -> str | None:
    """The webhook token of a GitRepository, None whatever the reason it has none."""
    from sync.source import secret_data

    try:
        repo = Registry().get(repository_type(), namespace, name)
    except errors.StatusError:
        return None
    ref = ((repo.get("spec") or {}).get("webhookSecretRef") or {}).get("name")
    if not ref:
        return None
    try:
        return secret_data(namespace, ref).get("token") or None
    except errors.StatusError:
        return None


#: Stands in for a missing secret, so every refusal costs the same work.
_NO_SECRET = "kapi-no-secret-" + os.urandom(16).hex()


def _digest(request: HttpRequest, secret: str) -> str | None:
    """HMAC-SHA256 of the body as it streams in (nothing kept); None past the cap."""
    mac = hmac.new(secret.encode(), digestmod=hashlib.sha256)
    stream = request if request.META.get("CONTENT_LENGTH") else request.META["wsgi.input"]
    size = 0
    while piece := stream.read(65536):
        size += len(piece)
        if size > MAX_WEBHOOK_BODY:
            return None
        mac.update(piece)
    return mac.hexdigest()


def _same(given: str, expected: str) -> bool:
    """Constant-time comparison of a header (any bytes) with the expected value."""
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), expected.encode())


@csrf_exempt
def webhook(request: HttpRequest, namespace: str, name: str) -> HttpResponse:
    """A forge's push notification. A missing repository, one without a webhook
    secret and a bad signature all get the same 401: nobody can learn from this
    endpoint which repositories exist."""
    if request.method != "POST":
        return JsonResponse({"message": "POST only"}, status=405)
    secret = _secret_token(namespace, name)
    key = secret or _NO_SECRET
    meta = request.META
    digest = _digest(request, key)
    ok = False
    if digest is None:
        return JsonResponse({"message": f"body is larger than {MAX_WEBHOOK_BODY} bytes"}, status=413)
    if "HTTP_X_HUB_SIGNATURE_256" in meta:
        ok = _same(meta["HTTP_X_HUB_SIGNATURE_256"].removeprefix("sha256="), digest)
    elif "HTTP_X_GITEA_SIGNATURE" in meta:
        ok = _same(meta["HTTP_X_GITEA_SIGNATURE"], digest)
    elif "HTTP_X_GITLAB_TOKEN" in meta:
        ok = _same(meta["HTTP_X_GITLAB_TOKEN"], key)
    if not ok or secret is None:
        return JsonResponse({"message": "signature or token does not match"}, status=401)
    controllers.request(controllers.REPOSITORY, namespace, name, "webhook")
    return JsonResponse({"message": "fetch requested"}, status=202)
