"""Helpers for the sync's end-to-end tests: a git working copy of a hosted
repository, manifests, and waiting on objects through kubectl."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
import uuid
from pathlib import Path

import yaml

__all__ = ["Work", "create", "pods_ready", "silent_server", "sync_namespace", "unique", "wait_for"]


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def sync_namespace(ns: str, account: str = "default") -> list[dict]:
    """Namespace ``ns`` and a ClusterRoleBinding that lets its Syncs (acting as
    its ServiceAccount ``account``, ``sync.identity``) do anything: the README's
    single-user grant, for tests about something other than the Sync's rights."""
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": f"sync-{ns}-{account}"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
         "subjects": [{"kind": "ServiceAccount", "name": account, "namespace": ns}]},
    ]


def create(server, *docs: dict) -> None:
    server.kubectl("apply", "-f", "-", input="\n---\n".join(json.dumps(d) for d in docs))


def wait_for(predicate, timeout: float = 30.0, interval: float = 0.2, what: str = "condition"):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def pods_ready(server, ns: str, app: str, count: int) -> None:
    """Play the kubelet: once the workload controllers have made ``count``
    Pods labelled ``app``, mark them Running and Ready (their ReplicaSet's
    and Deployment's status follow, written by kapi's controllers)."""

    def pods():
        out = json.loads(server.kubectl("get", "pods", "-n", ns, "-l", f"app={app}", "-o", "json").stdout)
        live = [p for p in out["items"] if "deletionTimestamp" not in p["metadata"]]
        return live if len(live) == count else None

    status = {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    for pod in wait_for(pods, what=f"{count} pods of {app}"):
        server.kubectl("patch", "pod", pod["metadata"]["name"], "-n", ns, "--subresource=status",
                       "--type=merge", "-p", json.dumps({"status": status}))


def silent_server() -> tuple[socket.socket, int]:
    """A TCP server on 127.0.0.1 that accepts connections and never sends a
    byte: whatever talks to it waits until its own timeout. Close the socket
    to stop it."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            held.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    return listener, listener.getsockname()[1]


class Work:
    """A clone of ``/git/<namespace>/<name>.git`` authenticated with the API token."""

    def __init__(self, server, namespace: str, name: str, path: Path) -> None:
        self.server = server
        self.path = path
        host = server.url.removeprefix("https://")
        self.remote = f"https://kapi:{server.token}@{host}/git/{namespace}/{name}.git"
        self.env = {**os.environ, "GIT_SSL_CAINFO": str(server.ca_path), "GIT_TERMINAL_PROMPT": "0",
                    "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                    "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
        self.git("clone", "-q", self.remote, str(path), cwd=path.parent)

    def git(self, *args: str, cwd: Path | None = None, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=cwd or self.path, env=self.env, capture_output=True,
                              text=True, check=check, timeout=120)

    def write(self, rel: str, *docs: dict | str) -> None:
        file = self.path / rel
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text("\n---\n".join(d if isinstance(d, str) else yaml.safe_dump(d) for d in docs))

    def remove(self, rel: str) -> None:
        (self.path / rel).unlink()

    def push(self, message: str = "change", check: bool = True) -> subprocess.CompletedProcess:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        done = self.git("push", "origin", "HEAD:main", check=False)
        if check and done.returncode != 0:
            raise AssertionError(f"push failed: {done.stderr}")
        return done


def hosted_sync(server, tmp_path: Path, prefix: str, **sync_spec) -> tuple[str, Work]:
    """A fresh namespace (its ServiceAccount granted, ``sync_namespace``) with a
    hosted GitRepository ``app`` and a Sync ``app`` of its whole tree with
    ``sync_spec``; the namespace and a work tree to push from."""
    ns = unique(prefix)
    create(
        server,
        *sync_namespace(ns),
        {"apiVersion": "sync.kapi.dev/v1", "kind": "GitRepository",
         "metadata": {"name": "app", "namespace": ns}, "spec": {}},
        {"apiVersion": "sync.kapi.dev/v1", "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
         "spec": {"sourceRef": {"name": "app"}, "path": "./", **sync_spec}},
    )
    return ns, Work(server, ns, "app", tmp_path / ns)
