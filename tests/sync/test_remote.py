"""Remote repositories (``file://``): picked up by polling and by the webhook;
a worker killed mid-reconcile leaves work the next run completes."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.request

from kapi_testserver import celery_pool
from sync_gitops import create, sync_namespace, unique, wait_for

API = "sync.kapi.dev/v1"
ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}


def _git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True, text=True)


def _commit(work, files: dict[str, str], message: str) -> str:
    for rel, text in files.items():
        path = work / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", message)
    return _git(work, "rev-parse", "HEAD").stdout.strip()


def _cm(name: str, value: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"v": value}})


def _get(server, *args):
    done = server.kubectl("get", *args, "-o", "json", check=False)
    return json.loads(done.stdout) if done.returncode == 0 else None


def _setup(server, tmp_path, interval: str, **extra):
    ns = unique("remote")
    work = tmp_path / "upstream"
    work.mkdir()
    _git(work, "init", "-q", "--initial-branch=main")
    _commit(work, {"deploy/a.json": _cm("a", "1")}, "first")
    create(
        server,
        *sync_namespace(ns),
        {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "up", "namespace": ns},
         "spec": {"url": f"file://{work}", "interval": interval, **extra}},
        {"apiVersion": API, "kind": "Sync", "metadata": {"name": "up", "namespace": ns},
         "spec": {"sourceRef": {"name": "up"}, "path": "deploy"}},
    )
    return ns, work


def _value(server, ns, name):
    return ((_get(server, "configmap", name, "-n", ns) or {}).get("data") or {}).get("v")


def test_file_remote_is_polled(kapi_server, tmp_path):
    """A file:// repository is fetched at spec.interval and new commits applied."""
    ns, work = _setup(kapi_server, tmp_path, "2s")
    wait_for(lambda: _value(kapi_server, ns, "a") == "1", timeout=30, what="first revision")
    sha = _commit(work, {"deploy/a.json": _cm("a", "2")}, "second")
    wait_for(lambda: _value(kapi_server, ns, "a") == "2", timeout=30, what="polled revision")
    repo = _get(kapi_server, "gitrepository", "up", "-n", ns)
    assert repo["status"]["artifact"]["revision"] == f"main@sha1:{sha}"
    assert repo["status"]["artifact"]["message"] == "second"


def _post(server, path: str, body: bytes, headers: dict) -> int:
    context = ssl.create_default_context(cafile=str(server.ca_path))
    request = urllib.request.Request(server.url + path, data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_webhook_triggers_fetch(kapi_server, tmp_path):
    """With a long interval, a signed GitHub (or GitLab) webhook fetches at once;
    a bad signature is refused."""
    ns, work = _setup(kapi_server, tmp_path, "1h", webhookSecretRef={"name": "hook"})
    create(kapi_server, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "hook", "namespace": ns},
                         "data": {"token": base64.b64encode(b"s3cret").decode()}})
    wait_for(lambda: _value(kapi_server, ns, "a") == "1", timeout=30, what="first revision")
    # The Sync's first pass may have asked for a fetch of its own while the
    # repository's first one ran; let that one land before the upstream moves.
    time.sleep(3)
    _commit(work, {"deploy/a.json": _cm("a", "2")}, "second")
    body = b'{"ref": "refs/heads/main"}'
    path = f"/hooks/git/{ns}/up"
    assert _post(kapi_server, path, body, {"X-Hub-Signature-256": "sha256=" + "0" * 64}) == 401
    assert _post(kapi_server, path, body, {}) == 401
    time.sleep(1)
    assert _value(kapi_server, ns, "a") == "1"
    signature = hmac.new(b"s3cret", body, hashlib.sha256).hexdigest()
    assert _post(kapi_server, path, body, {"X-Hub-Signature-256": f"sha256={signature}"}) == 202
    wait_for(lambda: _value(kapi_server, ns, "a") == "2", timeout=15, what="webhook fetch")
    _commit(work, {"deploy/a.json": _cm("a", "3")}, "third")
    assert _post(kapi_server, path, body, {"X-Gitlab-Token": "s3cret"}) == 202
    wait_for(lambda: _value(kapi_server, ns, "a") == "3", timeout=15, what="gitlab webhook fetch")


def test_unreachable_repository_is_a_condition(kapi_server, tmp_path):
    """A repository that cannot be fetched: Ready=False with git's message."""
    ns = unique("remote")
    create(kapi_server,
           *sync_namespace(ns),
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "gone", "namespace": ns},
            "spec": {"url": f"file://{tmp_path}/missing.git", "interval": "1h"}})

    def failed():
        repo = _get(kapi_server, "gitrepository", "gone", "-n", ns) or {}
        ready = next((c for c in (repo.get("status") or {}).get("conditions") or [] if c["type"] == "Ready"), {})
        return ready if ready.get("status") == "False" else None

    ready = wait_for(failed, timeout=20, what="fetch failure")
    assert ready["reason"] == "GitOperationFailed" and "fetch failed" in ready["message"]


def test_worker_killed_mid_reconcile_recovers(kapi_server, tmp_path):
    """SIGKILL of the pool processes while a 300-object revision is being applied:
    the advisory lock goes with the connection, the run is owed in the database,
    and a later run applies everything and goes Ready."""
    ns, work = _setup(kapi_server, tmp_path, "1h")
    wait_for(lambda: _value(kapi_server, ns, "a") == "1", timeout=30, what="first revision")
    files = {f"deploy/many/cm{i:03}.json": _cm(f"cm{i:03}", "x") for i in range(300)}
    _commit(work, files, "many")
    kapi_server.kubectl("annotate", "gitrepository", "up", "-n", ns, f"sync.kapi.dev/requestedAt={time.time()}")
    kapi_server.kubectl("patch", "gitrepository", "up", "-n", ns, "--type=merge", "-p", '{"spec":{"interval":"1s"}}')

    def some_applied():
        items = (_get(kapi_server, "configmaps", "-n", ns, "-l", "sync.kapi.dev/name=up") or {}).get("items", [])
        return 3 <= len(items) < 250
    wait_for(some_applied, timeout=60, interval=0.05, what="the reconcile to be under way")
    killed = [p.pid for p in celery_pool(kapi_server)]
    assert killed
    for pid in killed:
        os.kill(pid, signal.SIGKILL)

    def done():
        sync = _get(kapi_server, "sync", "up", "-n", ns) or {}
        status = sync.get("status") or {}
        ready = next((c for c in status.get("conditions") or [] if c["type"] == "Ready"), {})
        return ready.get("status") == "True" and len(status.get("inventory", {}).get("entries", [])) == 301
    wait_for(done, timeout=90, what="recovery after the kill")
    items = _get(kapi_server, "configmaps", "-n", ns, "-l", "sync.kapi.dev/name=up")["items"]
    assert len(items) == 301
