"""The broker (embedded Redis) killed and restarted: a CRD deleted while it is
down, with its queued tasks gone, is still cleaned up once it is back, because
the database holds the intent (deletionTimestamp + finalizer) and beat's sweep
enqueues it again. The API keeps answering throughout."""

from __future__ import annotations

import os
import signal
import time
import uuid

import psutil
import pytest
from kapi_testserver import KapiServer

from kapi.runtime import embedded
from tests.faults.conftest import client, figure
from tests.faults.test_worker_kill import CRD_PATH, _crd

#: Beat's safety sweep (30 s by default) is what re-enqueues the lost work: a
#: shorter period keeps the wait for it short, the mechanism the same.
SWEEP_SECONDS = "3"


@pytest.fixture
def fault_env() -> dict[str, str]:
    return {"KAPI_CONTROLLERS_SAFETY_SWEEP_SECONDS": SWEEP_SECONDS}


def _redis(server: KapiServer) -> psutil.Process:
    for proc in psutil.process_iter(["cmdline", "name"]):
        line = " ".join(proc.info["cmdline"] or [])
        if "redis" in (proc.info["name"] or "") and str(server.data_dir) in line:
            return proc
    for proc in psutil.process_iter(["name"]):
        if "redis-server" in (proc.info["name"] or ""):
            try:
                files = [c.path for c in proc.net_connections("unix")]
            except psutil.Error:
                continue
            if any(str(server.data_dir) in f for f in files):
                return proc
    raise AssertionError("no embedded redis for this server")


def test_broker_restart_loses_no_intent(fault_server: KapiServer, monkeypatch) -> None:
    api = client(fault_server)
    group = f"b{uuid.uuid4().hex[:8]}.example.com"
    assert api.request("POST", CRD_PATH, json=_crd(group)).status_code == 201
    path = f"/apis/{group}/v1/namespaces/default/widgets"
    deadline = time.monotonic() + 30
    while api.request("GET", path).status_code != 200:
        assert time.monotonic() < deadline
        time.sleep(0.2)
    for i in range(20):
        body = {"apiVersion": f"{group}/v1", "kind": "Widget", "metadata": {"name": f"x{i}"}}
        assert api.request("POST", path, json=body).status_code == 201
    redis = _redis(fault_server)
    os.kill(redis.pid, signal.SIGKILL)
    redis.wait(10)
    # While the broker is down the API still answers, and the deletion is recorded.
    assert api.request("DELETE", f"{CRD_PATH}/widgets.{group}").status_code == 200
    assert api.request("GET", path).status_code == 200
    time.sleep(2)
    monkeypatch.setenv("KAPI_DATA_DIR", str(fault_server.data_dir))
    restarted = embedded.start_redis()
    started = time.monotonic()
    try:
        deadline = started + 60
        while api.request("GET", f"{CRD_PATH}/widgets.{group}").status_code != 404:
            assert time.monotonic() < deadline, "deletion not finished after the broker came back"
            time.sleep(0.2)
        recovered = time.monotonic() - started
    finally:
        # Ours to stop: serve stops only the Redis it started.
        restarted.stop()
    figure("broker_restart", tasks_lost=0, recover_seconds=round(recovered, 2),
           stuck_finalizers=0)
