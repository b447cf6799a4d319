"""``spec.secretRef`` end to end against real authenticating git servers:
https basic auth (``username``/``password`` and ``token``) and ssh
(``identity`` + ``known_hosts``, host key enforced). A failure is a
GitRepository condition with git's reason, and no secret ever shows in a
status, an Event, the server's output or the data directory."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path

import pytest
from sync_git_servers import BasicAuthGitServer, SshGitServer
from sync_gitops import Work, create, sync_namespace, unique, wait_for

API = "sync.kapi.dev/v1"
PASSWORD = "pw-Secret-7f3a9"
TOKEN = "tok-Secret-c41d2"
ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}


def _git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True, text=True)


@pytest.fixture(scope="module")
def upstream(tmp_path_factory) -> Path:
    """A served bare repository ``<root>/app.git`` whose main has deploy/cm.json."""
    root = tmp_path_factory.mktemp("served")
    work = root / "work"
    (work / "deploy").mkdir(parents=True)
    (work / "deploy" / "cm.json").write_text(json.dumps(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "from-remote"}, "data": {"v": "1"}}))
    _git(root, "init", "-q", "--initial-branch=main", str(work))
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "first")
    _git(root, "clone", "-q", "--bare", str(work), str(root / "app.git"))
    return root


@pytest.fixture(scope="module")
def https_server(upstream):
    server = BasicAuthGitServer(upstream, [("alice", PASSWORD), (None, TOKEN)])
    yield server
    server.close()


@pytest.fixture(scope="module")
def ssh_server():
    server = SshGitServer()
    yield server
    server.close()


def _secret(name: str, ns: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": ns},
            "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()}}


def _source(server, url: str, **secret: str) -> str:
    """A namespace with a GitRepository of ``url`` using ``secret`` and a Sync of it."""
    ns = unique("creds")
    create(server,
           *sync_namespace(ns),
           _secret("git-auth", ns, **secret),
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns},
            "spec": {"url": url, "interval": "1h", "secretRef": {"name": "git-auth"}}},
           {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
            "spec": {"sourceRef": {"name": "app"}, "path": "deploy"}})
    return ns


def _get(server, *args):
    done = server.kubectl("get", *args, "-o", "json", check=False)
    return json.loads(done.stdout) if done.returncode == 0 else None


def _applied(server, ns: str):
    return lambda: ((_get(server, "configmap", "from-remote", "-n", ns) or {}).get("data") or {}).get("v") == "1"


def _failed(server, ns: str, name: str = "app") -> dict:
    def ready_false():
        repo = _get(server, "gitrepository", name, "-n", ns) or {}
        ready = next((c for c in (repo.get("status") or {}).get("conditions") or [] if c["type"] == "Ready"), {})
        return ready if ready.get("status") == "False" else None
    return wait_for(ready_false, timeout=30, what="the fetch to fail")


def _assert_nowhere(server, ns: str, *secrets: str) -> None:
    """Not in the namespace's GitRepository/Sync/Events, the server's output,
    nor any file the sync keeps (mirrors, checkouts, hosted repositories)."""
    objects = server.kubectl("get", "gitrepositories,syncs,events", "-n", ns, "-o", "json").stdout
    output = server.output()
    files = {}
    for path in (p for d in ("sync", "git") for p in (server.data_dir / d).rglob("*")):
        try:
            files[path] = path.read_bytes()
        except (FileNotFoundError, IsADirectoryError):
            pass  # the sync removed it meanwhile (e.g. an earlier test's checkout)
    for secret in secrets:
        for line in secret.strip().splitlines()[1:2] or [secret]:
            assert line not in objects
            assert line not in output
            assert not [p for p, data in files.items() if line.encode() in data]


def test_https_username_password(kapi_server, https_server):
    """Basic auth with username/password: git answers the 401 challenge with them."""
    ns = _source(kapi_server, https_server.url + "/app.git", username="alice", password=PASSWORD)
    wait_for(_applied(kapi_server, ns), timeout=30, what="the ConfigMap from the authenticated remote")
    assert ("alice", True) in https_server.attempts
    _assert_nowhere(kapi_server, ns, PASSWORD)


def test_https_token(kapi_server, https_server):
    """``token`` alone: sent as the password (any user name), as forges take tokens."""
    before = len(https_server.attempts)
    ns = _source(kapi_server, https_server.url + "/app.git", token=TOKEN)
    wait_for(_applied(kapi_server, ns), timeout=30, what="the ConfigMap fetched with a token")
    assert any(ok for _, ok in https_server.attempts[before:])
    _assert_nowhere(kapi_server, ns, TOKEN)


def test_https_wrong_password_is_a_condition(kapi_server, https_server):
    ns = _source(kapi_server, https_server.url + "/app.git", username="alice", password="wrong-" + PASSWORD)
    ready = _failed(kapi_server, ns)
    assert ready["reason"] == "GitOperationFailed"
    assert "Authentication failed" in ready["message"]
    assert ("alice", False) in https_server.attempts
    assert _get(kapi_server, "configmap", "from-remote", "-n", ns) is None
    _assert_nowhere(kapi_server, ns, "wrong-" + PASSWORD)


def test_ssh_identity_and_known_hosts(kapi_server, ssh_server, upstream):
    url = ssh_server.url(upstream / "app.git")
    ns = _source(kapi_server, url, identity=ssh_server.private_key(), known_hosts=ssh_server.known_hosts_line())
    wait_for(_applied(kapi_server, ns), timeout=30, what="the ConfigMap fetched over ssh")
    assert f"git-upload-pack '{upstream / 'app.git'}'" in ssh_server.commands
    _assert_nowhere(kapi_server, ns, ssh_server.private_key())


def test_ssh_unknown_host_key_is_refused(kapi_server, ssh_server, upstream):
    """known_hosts is enforced: a server whose key is not the one listed is not
    trusted (no upload-pack runs), and the condition says why."""
    before = list(ssh_server.commands)
    url = ssh_server.url(upstream / "app.git")
    ns = _source(kapi_server, url, identity=ssh_server.private_key(),
                 known_hosts=ssh_server.known_hosts_line(ssh_server.other_key))
    ready = _failed(kapi_server, ns)
    assert ready["reason"] == "GitOperationFailed"
    assert "Host key verification failed" in ready["message"]
    assert ssh_server.commands == before
    assert _get(kapi_server, "configmap", "from-remote", "-n", ns) is None
    _assert_nowhere(kapi_server, ns, ssh_server.private_key())


def test_ssh_key_not_authorized(kapi_server, ssh_server, upstream):
    url = ssh_server.url(upstream / "app.git")
    ns = _source(kapi_server, url, identity=ssh_server.private_key(ssh_server.other_key),
                 known_hosts=ssh_server.known_hosts_line())
    ready = _failed(kapi_server, ns)
    assert "Permission denied (publickey)" in ready["message"]


def test_https_to_kapi_hosted_git_with_token_and_ca(kapi_server, tmp_path):
    """A remote over real HTTPS with a private CA: kapi's own hosted git of
    another GitRepository, whose password is an API bearer token. ``ca.crt``
    in the Secret is the trust anchor; without it, or with a bad token, the
    fetch fails with git's reason."""
    ns = unique("creds-tls")
    create(kapi_server,
           *sync_namespace(ns),
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "origin", "namespace": ns}, "spec": {}})
    work = Work(kapi_server, ns, "origin", tmp_path / "origin")
    work.write("deploy/cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "from-remote"},
                                  "data": {"v": "1"}})
    work.push("for the https remote")
    url = f"{kapi_server.url}/git/{ns}/origin.git"
    ca = kapi_server.ca_path.read_text()

    def remote(name: str, **secret: str) -> None:
        create(kapi_server, _secret(name, ns, **secret),
               {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": name, "namespace": ns},
                "spec": {"url": url, "interval": "1h", "secretRef": {"name": name}}},
               {"apiVersion": API, "kind": "Sync", "metadata": {"name": name, "namespace": ns},
                "spec": {"sourceRef": {"name": name}, "path": "deploy"}})

    remote("app", username="anyone", password=kapi_server.token, **{"ca.crt": ca})
    wait_for(_applied(kapi_server, ns), timeout=30, what="the ConfigMap fetched over https")
    head = work.git("rev-parse", "HEAD").stdout.strip()
    app = _get(kapi_server, "gitrepository", "app", "-n", ns)
    assert app["status"]["artifact"]["revision"] == f"main@sha1:{head}"

    remote("untrusted", token=kapi_server.token)
    ready = _failed(kapi_server, ns, "untrusted")
    assert "certificate" in ready["message"]
    remote("badtoken", token="not-" + kapi_server.token, **{"ca.crt": ca})
    ready = _failed(kapi_server, ns, "badtoken")
    assert "Authentication failed" in ready["message"]
    _assert_nowhere(kapi_server, ns, kapi_server.token)
