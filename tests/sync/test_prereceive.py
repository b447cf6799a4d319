"""Validate-on-push without a Django boot per push: the hosted repository's
pre-receive hook asks the API server that serves the push
(``/hooks/pre-receive/<namespace>/<name>``, the pusher's token), and falls back
to ``manage.py sync pre-receive`` for a push that bypasses the server."""

from __future__ import annotations

import json
import ssl
import subprocess
import urllib.error
import urllib.request

from sync_gitops import Work, create, sync_namespace, unique, wait_for
from user_kubeconfigs import new_user

API = "sync.kapi.dev/v1"


def _cm(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"v": "1"}}


def _hosted(server, tmp_path) -> tuple[str, Work]:
    ns = unique("prerecv")
    create(server,
           *sync_namespace(ns),
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns}, "spec": {}},
           {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
            "spec": {"sourceRef": {"name": "app"}}})
    return ns, Work(server, ns, "app", tmp_path / "work")


def _post(server, path: str, body: dict, token: str | None) -> tuple[int, object, dict]:
    context = ssl.create_default_context(cafile=str(server.ca_path))
    headers = {"Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(server.url + path, data=json.dumps(body).encode(), headers=headers,
                                     method="POST")
    try:
        with urllib.request.urlopen(request, context=context, timeout=30) as response:
            return response.status, response.headers, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        text = exc.read()
        return exc.code, exc.headers, json.loads(text) if text.startswith(b"{") else {}


def test_push_is_validated_by_the_server_and_by_the_hook_fallback(kapi_server, tmp_path):
    ns, work = _hosted(kapi_server, tmp_path)
    work.write("good.yaml", _cm("good"))
    work.push("good")
    wait_for(lambda: kapi_server.kubectl("get", "configmap", "good", "-n", ns, check=False).returncode == 0,
             timeout=30, what="the good push to be applied")
    accepted = work.git("rev-parse", "HEAD").stdout.strip()

    work.write("bad.yaml", _cm("Not_A_Valid_Name"))
    done = work.push("bad", check=False)
    assert done.returncode != 0
    assert "remote: kapi: Sync" in done.stderr and "metadata.name" in done.stderr
    assert "pre-receive hook declined" in done.stderr

    # Straight into the repository on disk (an administrator on the machine):
    # the same hook validates it itself, with the same verdict.
    bare = kapi_server.data_dir / "git" / ns / "app.git"
    env = {**work.env, "KAPI_DATA_DIR": str(kapi_server.data_dir)}
    local = subprocess.run(["git", "push", f"file://{bare}", "HEAD:main"], cwd=work.path, env=env,
                           capture_output=True, text=True, timeout=120)
    assert local.returncode != 0
    assert "metadata.name" in local.stderr and "pre-receive hook declined" in local.stderr
    heads = work.git("ls-remote", "origin", "refs/heads/main").stdout.split()
    assert heads[0] == accepted


def test_pre_receive_endpoint_refuses_strangers_and_foreign_paths(kapi_server, tmp_path):
    ns, _ = _hosted(kapi_server, tmp_path)
    path = f"/hooks/pre-receive/{ns}/app"
    body = {"updates": [f"{'0' * 40} {'1' * 40} refs/heads/main"], "quarantine": ""}
    status, headers, _ = _post(kapi_server, path, body, None)
    assert status == 401 and headers.get("WWW-Authenticate") == 'Basic realm="kapi"'
    assert _post(kapi_server, path, body, "not-a-token")[0] == 401
    # Only the repository's own quarantine directory may be read.
    status, _, answer = _post(kapi_server, path, {**body, "quarantine": "/etc"}, kapi_server.token)
    assert status == 400 and "quarantine" in answer["message"]
    outside = kapi_server.data_dir / "git" / ns / "incoming-x"
    outside.mkdir(parents=True)
    assert _post(kapi_server, path, {**body, "quarantine": str(outside)}, kapi_server.token)[0] == 400
    assert _post(kapi_server, f"/hooks/pre-receive/{ns}/missing", body, kapi_server.token)[0] == 404
    # A user who may not push to the repository may not have a push validated either.
    _, stranger = new_user(kapi_server, "no-push")
    assert _post(kapi_server, path, body, stranger)[0] == 403
