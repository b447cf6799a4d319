"""kill -9 of the Celery pool in the middle of a garbage collection (an owner
deleted in the foreground with a few hundred dependents): the owner's
foregroundDeletion finalizer and the dependents' owner references say what is
left, and after the pool is replaced every dependent and then the owner go;
nothing keeps a finalizer forever."""

from __future__ import annotations

import os
import signal
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from kapi_testserver import KapiServer, celery_pool

from tests.faults.conftest import client, figure

DEPENDENTS = 300


def test_kill_worker_mid_garbage_collection(fault_server: KapiServer) -> None:
    api = client(fault_server)
    ns = f"gc-{uuid.uuid4().hex[:6]}"
    assert api.request("POST", "/api/v1/namespaces", json={"metadata": {"name": ns}}).ok
    path = f"/api/v1/namespaces/{ns}/configmaps"
    owner = api.request("POST", path, json={"metadata": {"name": "owner"}}).json()
    ref = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
           "uid": owner["metadata"]["uid"], "blockOwnerDeletion": True}

    def create(i: int) -> int:
        body = {"metadata": {"name": f"d{i}", "ownerReferences": [ref]}}
        return client(fault_server).request("POST", path, json=body).status_code

    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(create, range(DEPENDENTS))) == {201}
    deleted = api.request("DELETE", f"{path}/owner",
                          json={"propagationPolicy": "Foreground"})
    assert deleted.status_code in (200, 202), deleted.text

    def dependents() -> int:
        items = api.request("GET", path).json()["items"]
        return sum(1 for cm in items if cm["metadata"]["name"].startswith("d"))

    deadline = time.monotonic() + 60
    while dependents() >= DEPENDENTS:
        assert time.monotonic() < deadline, "garbage collection never started"
        time.sleep(0.02)
    at_kill = dependents()
    for proc in celery_pool(fault_server):
        os.kill(proc.pid, signal.SIGKILL)
    killed = time.monotonic()
    deadline = killed + 90
    while api.request("GET", f"{path}/owner").status_code != 404 or dependents():
        assert time.monotonic() < deadline, (
            f"not collected: {dependents()} dependents left, owner "
            f"{api.request('GET', f'{path}/owner').status_code}")
        time.sleep(0.2)
    figure("worker_kill_gc", dependents=DEPENDENTS, left_at_kill=at_kill,
           finish_seconds_after_kill=round(time.monotonic() - killed, 2), stuck_finalizers=0)
