"""``spec.timeout`` of a Sync bounds rendering too, not only validate, apply,
prune and the health checks: a kustomization whose remote resource never
answers ends the attempt at the deadline with Flux's BuildFailed reason and the
same kind of message the other stages give, and nothing is applied. Remote
resources are refused by default (``sync.kustomize``): this server's
administrator allows them (``KAPI_SYNC_KUSTOMIZE_REMOTE=1``)."""

from __future__ import annotations

import json

import pytest
from sync_gitops import Work, create, silent_server, sync_namespace, unique, wait_for

API = "sync.kapi.dev/v1"




@pytest.fixture
def remote_server(timers_server):
    return timers_server


def _sync(server, ns: str) -> dict:
    return json.loads(server.kubectl("get", "syncs", "app", "-n", ns, "-o", "json").stdout)


def _conditions(sync: dict) -> dict[str, dict]:
    return {c["type"]: c for c in (sync.get("status") or {}).get("conditions") or []}


def test_timeout_bounds_the_render(remote_server, tmp_path):
    kapi_server = remote_server
    listener, port = silent_server()
    try:
        ns = unique("rendto")
        create(kapi_server,
               *sync_namespace(ns),
               # No validate-on-push: the push itself would wait for the remote resource.
               {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns},
                "spec": {"validateOnPush": False}},
               {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
                "spec": {"sourceRef": {"name": "app"}, "path": "./", "timeout": "2s",
                         "retryInterval": "1h"}})
        work = Work(kapi_server, ns, "app", tmp_path / "work")
        work.write("cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "local"}})
        # The build cannot finish before the silent server answers, which it never does.
        work.write("kustomization.yaml", {"resources": ["cm.yaml", f"https://127.0.0.1:{port}/remote.yaml"]})
        work.push("a kustomization with a remote resource that never answers")
        head = work.git("rev-parse", "HEAD").stdout.strip()

        def failed():
            # The attempt has ended (the push and the source's new artifact may
            # each have asked for one; every one ends the same way) for this
            # revision, not the first attempt that found no artifact yet.
            sync = _sync(kapi_server, ns)
            if not (sync.get("status") or {}).get("lastAttemptedRevision", "").endswith(head):
                return None
            conditions = _conditions(sync)
            ready = conditions.get("Ready", {})
            return ready if ready.get("status") == "False" and "Reconciling" not in conditions else None

        ready = wait_for(failed, timeout=60, what="the render to time out")
        assert ready["reason"] == "BuildFailed", ready
        assert ready["message"].startswith("timeout of 2s exceeded while rendering revision ")
        assert head in ready["message"]
        sync = _sync(kapi_server, ns)
        assert "lastAppliedRevision" not in sync["status"]
        assert kapi_server.kubectl("get", "configmap", "local", "-n", ns, check=False).returncode != 0
    finally:
        listener.close()
