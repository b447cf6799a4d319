"""kill -9 of the Celery worker's pool processes in the middle of a CRD's
cleanup finalizer (deleting its custom resources, then the CRD): Celery
replaces them, the task is redelivered (``acks_late``) or beat's sweep enqueues
it again (the CRD's deletionTimestamp and finalizer say what is left to do),
and the deletion finishes; nothing keeps its finalizer forever."""

from __future__ import annotations

import os
import signal
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

from kapi_testserver import KapiServer, celery_pool

from tests.faults.conftest import client, figure

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
OBJECTS = 300


def _crd(group: str) -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{
                "name": "v1", "served": True, "storage": True,
                "schema": {"openAPIV3Schema": {
                    "type": "object", "x-kubernetes-preserve-unknown-fields": True}},
            }],
        },
    }


def test_kill_worker_mid_crd_cleanup(fault_server: KapiServer) -> None:
    api = client(fault_server)
    group = f"w{uuid.uuid4().hex[:8]}.example.com"
    assert api.request("POST", CRD_PATH, json=_crd(group)).status_code == 201
    path = f"/apis/{group}/v1/namespaces/default/widgets"
    deadline = time.monotonic() + 30
    while api.request("GET", path).status_code != 200:
        assert time.monotonic() < deadline, "CRD not served"
        time.sleep(0.2)

    def create(i: int) -> int:
        body = {"apiVersion": f"{group}/v1", "kind": "Widget",
                "metadata": {"name": f"x{i}"}, "spec": {"i": i}}
        return client(fault_server).request("POST", path, json=body).status_code

    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(create, range(OBJECTS))) == {201}
    assert api.request("DELETE", f"{CRD_PATH}/widgets.{group}").status_code == 200

    def remaining() -> int:
        r = api.request("GET", path)
        return len(r.json()["items"]) if r.status_code == 200 else 0

    deadline = time.monotonic() + 30
    while remaining() >= OBJECTS:
        assert time.monotonic() < deadline, "cleanup never started"
        time.sleep(0.05)
    left_at_kill = remaining()
    victims = celery_pool(fault_server)
    for proc in victims:
        os.kill(proc.pid, signal.SIGKILL)
    killed_at = time.monotonic()
    deadline = killed_at + 60
    while api.request("GET", f"{CRD_PATH}/widgets.{group}").status_code != 404:
        assert time.monotonic() < deadline, "CRD still there a minute after the kill"
        time.sleep(0.2)
    finished = time.monotonic() - killed_at
    assert {p.pid for p in celery_pool(fault_server)}.isdisjoint({p.pid for p in victims})
    figure("worker_kill_crd_cleanup", objects=OBJECTS, left_at_kill=left_at_kill,
           finish_seconds_after_kill=round(finished, 2), stuck_finalizers=0)
