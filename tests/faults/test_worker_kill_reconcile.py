"""kill -9 of the Celery pool in the middle of a Sync's reconcile (applying a
few hundred objects): the work item in the database says it is still to do, the
task is redelivered or re-enqueued, and the Sync ends Ready at the pushed
revision with every object applied."""

from __future__ import annotations

import os
import signal
import time

from kapi_testserver import KapiServer, celery_pool
from sync_gitops import Work, create, sync_namespace, wait_for

from tests.faults.conftest import client, figure

API = "sync.kapi.dev/v1"
OBJECTS = 400


def test_kill_worker_mid_reconcile(fault_server: KapiServer, tmp_path) -> None:
    api = client(fault_server)
    ns = "reconcile-kill"
    assert api.request("POST", "/api/v1/namespaces", json={"metadata": {"name": ns}}).ok
    create(
        fault_server,
        *sync_namespace(ns)[1:],
        {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns},
         "spec": {}},
        {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
         "spec": {"sourceRef": {"kind": "GitRepository", "name": "app"}, "path": "./deploy"}},
    )
    work = Work(fault_server, ns, "app", tmp_path / "app")
    work.write("deploy/cms.yaml", *[
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{i}"},
         "data": {"i": str(i)}}
        for i in range(OBJECTS)
    ])
    work.push("many")
    head = work.git("rev-parse", "HEAD").stdout.strip()

    def applied() -> int:
        r = api.request("GET", f"/api/v1/namespaces/{ns}/configmaps")
        return sum(1 for cm in r.json()["items"] if cm["metadata"]["name"][1:].isdigit())

    deadline = time.monotonic() + 60
    while applied() == 0:
        assert time.monotonic() < deadline, "reconcile never started"
        time.sleep(0.02)
    at_kill = applied()
    for proc in celery_pool(fault_server):
        os.kill(proc.pid, signal.SIGKILL)
    killed = time.monotonic()

    def ready():
        sync = api.request("GET", f"/apis/sync.kapi.dev/v1/namespaces/{ns}/syncs/app").json()
        status = sync.get("status") or {}
        cond = next((c for c in status.get("conditions") or [] if c["type"] == "Ready"), {})
        return (cond.get("status") == "True"
                and status.get("lastAppliedRevision", "").endswith(head))

    wait_for(ready, timeout=90, what="Sync Ready after the kill")
    finished = time.monotonic() - killed
    assert applied() == OBJECTS
    figure("worker_kill_reconcile", objects=OBJECTS, applied_at_kill=at_kill,
           finish_seconds_after_kill=round(finished, 2), stuck=0)
