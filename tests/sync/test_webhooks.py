"""Forge webhooks at ``/hooks/git/<namespace>/<name>``, each authenticated as
its forge sends it (GitHub ``X-Hub-Signature-256: sha256=<hex>``, Gitea
``X-Gitea-Signature: <hex>``, both HMAC-SHA256 of the body with the shared
secret; GitLab ``X-Gitlab-Token: <secret>``): a good one fetches a ``file://``
remote at once (its interval is an hour), a bad one is 401 and fetches nothing.
A missing repository, one without a webhook secret and a bad signature get
the very same answer, so nobody can learn which repositories exist."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import ssl
import subprocess
import time
import urllib.error
import urllib.request

import pytest
from sync_gitops import create, sync_namespace, unique, wait_for

API = "sync.kapi.dev/v1"
SECRET = b"hook-s3cret"
BODY = json.dumps({"ref": "refs/heads/main", "after": "0" * 40}).encode()


def _hmac(key: bytes, body: bytes) -> str:
    return hmac.new(key, body, hashlib.sha256).hexdigest()


FORGES = {
    "github": (lambda key, body: {"X-GitHub-Event": "push", "X-Hub-Signature-256": "sha256=" + _hmac(key, body)}),
    "gitea": (lambda key, body: {"X-Gitea-Event": "push", "X-Gitea-Signature": _hmac(key, body)}),
    "gitlab": (lambda key, body: {"X-Gitlab-Event": "Push Hook", "X-Gitlab-Token": key.decode()}),
}


def _git(cwd, *args):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def _commit(work, value: str) -> str:
    (work / "cm.json").write_text(json.dumps(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "hooked"}, "data": {"v": value}}))
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", f"value {value}")
    return _git(work, "rev-parse", "HEAD").strip()


def _post(server, path: str, headers: dict, body: bytes = BODY) -> int:
    context = ssl.create_default_context(cafile=str(server.ca_path))
    request = urllib.request.Request(server.url + path, data=body, method="POST",
                                     headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _revision(server, ns: str) -> str:
    done = server.kubectl("get", "gitrepository", "up", "-n", ns, "-o", "json", check=False)
    if done.returncode:
        return ""
    return ((json.loads(done.stdout).get("status") or {}).get("artifact") or {}).get("revision", "")


def _applied(server, ns: str, value: str):
    def check() -> bool:
        done = server.kubectl("get", "configmap", "hooked", "-n", ns, "-o", "json", check=False)
        return done.returncode == 0 and json.loads(done.stdout)["data"]["v"] == value
    return check


@pytest.mark.parametrize("forge", sorted(FORGES))
def test_forge_webhook_fetches_at_once_and_bad_ones_do_not(kapi_server, tmp_path, forge):
    ns = unique(f"hook-{forge}")
    work = tmp_path / "upstream"
    work.mkdir()
    _git(work, "init", "-q", "--initial-branch=main")
    first = _commit(work, "1")
    create(kapi_server,
           *sync_namespace(ns),
           {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "hook", "namespace": ns},
            "data": {"token": base64.b64encode(SECRET).decode()}},
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "up", "namespace": ns},
            "spec": {"url": f"file://{work}", "interval": "1h", "webhookSecretRef": {"name": "hook"}}})
    wait_for(lambda: _revision(kapi_server, ns) == f"main@sha1:{first}", timeout=30, what="first fetch")
    # The Sync comes once the artifact exists, so it never asks for a fetch itself:
    # from here on only a webhook can make one (the interval is an hour).
    create(kapi_server, {"apiVersion": API, "kind": "Sync", "metadata": {"name": "up", "namespace": ns},
                         "spec": {"sourceRef": {"name": "up"}}})
    wait_for(_applied(kapi_server, ns, "1"), timeout=30, what="the first revision to be applied")
    second = _commit(work, "2")
    path = f"/hooks/git/{ns}/up"
    sign = FORGES[forge]

    # Refused: the wrong secret, a signature of another body, no credential at all.
    assert _post(kapi_server, path, sign(b"not-the-secret", BODY)) == 401
    if forge != "gitlab":
        assert _post(kapi_server, path, sign(SECRET, BODY + b" ")) == 401
    assert _post(kapi_server, path, {}) == 401
    # No enumeration: a missing repository answers as a bad signature does.
    assert _post(kapi_server, f"/hooks/git/{ns}/missing", sign(SECRET, BODY)) == 401
    time.sleep(2)  # a fetch, had one been requested, lands well within this
    assert _revision(kapi_server, ns) == f"main@sha1:{first}"

    assert _post(kapi_server, path, sign(SECRET, BODY)) == 202
    wait_for(lambda: _revision(kapi_server, ns) == f"main@sha1:{second}", timeout=15, what="the webhook's fetch")

    wait_for(_applied(kapi_server, ns, "2"), timeout=15, what="the fetched revision to be applied")


def test_webhook_answers_do_not_reveal_which_repositories_exist(kapi_server):
    """Same status and body for: no such namespace, no such repository, a
    repository without webhookSecretRef, one whose Secret is missing, a bad
    signature; and a header that is not ASCII is a 401 too, never a 500."""
    ns = unique("hook-enum")
    create(kapi_server,
           {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
           {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "hook", "namespace": ns},
            "data": {"token": base64.b64encode(SECRET).decode()}},
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "nosecret", "namespace": ns},
            "spec": {}},
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "gone", "namespace": ns},
            "spec": {"webhookSecretRef": {"name": "missing"}}},
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "real", "namespace": ns},
            "spec": {"webhookSecretRef": {"name": "hook"}}})
    context = ssl.create_default_context(cafile=str(kapi_server.ca_path))

    def answer(path: str, headers: dict) -> tuple[int, bytes]:
        request = urllib.request.Request(kapi_server.url + path, data=BODY, method="POST",
                                         headers={"Content-Type": "application/json", **headers})
        try:
            with urllib.request.urlopen(request, context=context, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    bad = FORGES["github"](b"guess", BODY)
    answers = {answer(path, bad) for path in (
        "/hooks/git/no-such-namespace/x", f"/hooks/git/{ns}/missing", f"/hooks/git/{ns}/nosecret",
        f"/hooks/git/{ns}/gone", f"/hooks/git/{ns}/real")}
    assert answers == {(401, b'{"message": "signature or token does not match"}')}
    assert answer(f"/hooks/git/{ns}/real", {"X-Gitlab-Token": "caf\u00e9"})[0] == 401
    assert answer(f"/hooks/git/{ns}/real", FORGES["github"](SECRET, BODY))[0] == 202
