"""A status write of an object a waiting Sync has applied wakes its health check
(``sync.healthwake``): the poll is only a safety net. This server's poll is an
hour, so a Sync that becomes Ready within the test's wait was woken by the write."""

from __future__ import annotations

import json

import pytest
from sync_gitops import Work, create, pods_ready, sync_namespace, unique, wait_for

API = "sync.kapi.dev/v1"




@pytest.fixture
def slow_poll_server(timers_server):
    return timers_server


def _sync(server, ns: str) -> dict:
    return json.loads(server.kubectl("get", "syncs", "app", "-n", ns, "-o", "json").stdout)


def _conditions(sync: dict) -> dict[str, dict]:
    return {c["type"]: c for c in (sync.get("status") or {}).get("conditions") or []}


def _deployment(name: str) -> dict:
    labels = {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 2, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}


def test_status_write_wakes_the_waiting_sync(slow_poll_server, tmp_path):
    server = slow_poll_server
    ns = unique("wake")
    create(server,
           *sync_namespace(ns),
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns}, "spec": {}},
           {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
            "spec": {"sourceRef": {"name": "app"}, "path": "./", "wait": True, "timeout": "1h"}})
    work = Work(server, ns, "app", tmp_path / "work")
    work.write("app.yaml", _deployment("web"))
    work.push("deployment")
    wait_for(lambda: _conditions(_sync(server, ns)).get("Reconciling", {}).get("status") == "True"
             and "healthCheckDeadline" in _sync(server, ns)["status"],
             timeout=60, what="the Sync waiting on the Deployment")
    # Waiting on the Deployment, with no poll due for an hour.
    sync = _sync(server, ns)
    assert _conditions(sync)["Ready"]["status"] == "Unknown"
    assert f"Deployment/{ns}/web" in _conditions(sync)["Reconciling"]["message"]

    # The kubelet's part: the Pods Ready; the Deployment's status write wakes the Sync.
    pods_ready(server, ns, "web", 2)
    ready = wait_for(lambda: (r := _conditions(_sync(server, ns)).get("Ready", {})).get("status") == "True" and r,
                     timeout=60, what="the status write to wake the health check")
    assert ready["reason"] == "ReconciliationSucceeded"
    assert "Reconciling" not in _conditions(_sync(server, ns))
