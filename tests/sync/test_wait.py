"""``spec.wait`` and ``spec.timeout`` of a Sync on a real server and workers.

Nothing runs workloads here, so a test plays the kubelet by marking the
Deployment's Pods Ready; kapi's ReplicaSet and Deployment controllers write
the status the health checks read.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

from sync_gitops import Work, hosted_sync, pods_ready, wait_for


def _deployment(name: str) -> dict:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}},
    }


def _setup(server, tmp_path, **sync_spec) -> tuple[str, Work]:
    return hosted_sync(server, tmp_path, "wait", **sync_spec)


def _sync(server, ns: str) -> dict:
    return json.loads(server.kubectl("get", "syncs", "app", "-n", ns, "-o", "json").stdout)


def _conditions(sync: dict) -> dict[str, dict]:
    return {c["type"]: c for c in (sync.get("status") or {}).get("conditions") or []}


def _mark_available(server, ns: str, name: str, replicas: int = 2) -> None:
    """Make the Deployment available: its Pods Ready."""
    pods_ready(server, ns, name, replicas)


def test_wait_reports_progress_until_the_deployment_is_available(kapi_server, tmp_path):
    """While the Deployment is not available the Sync is Ready=Unknown and
    Reconciling=True (Progressing) naming it; once its status says available,
    Ready=True and Reconciling is gone."""
    ns, work = _setup(kapi_server, tmp_path, wait=True, timeout="5m")
    work.write("app.yaml", _deployment("web"),
               {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "conf"}, "data": {"a": "1"}})
    work.push("deployment")

    def progressing():
        conds = _conditions(_sync(kapi_server, ns))
        reconciling = conds.get("Reconciling", {})
        return conds if reconciling.get("status") == "True" and "Deployment/" in reconciling.get("message", "") \
            else None

    conds = wait_for(progressing, what="Reconciling=True while waiting")
    assert conds["Ready"]["status"] == "Unknown"
    assert conds["Ready"]["reason"] == "Progressing"
    assert conds["Reconciling"]["reason"] == "Progressing"
    assert f"Deployment/{ns}/web" in conds["Reconciling"]["message"]
    assert re.search(r"(Replicas|Updated|Ready|Available): 0/2", conds["Reconciling"]["message"])
    # The objects are applied while the Sync waits; the ConfigMap is healthy.
    assert "ConfigMap" not in conds["Reconciling"]["message"]
    kapi_server.kubectl("get", "configmap", "conf", "-n", ns)
    assert "lastAppliedRevision" not in _sync(kapi_server, ns)["status"]

    _mark_available(kapi_server, ns, "web")
    kapi_server.kubectl("wait", "--for=condition=Ready", "sync/app", "-n", ns, "--timeout=30s")
    sync = _sync(kapi_server, ns)
    conds = _conditions(sync)
    assert conds["Ready"]["reason"] == "ReconciliationSucceeded"
    assert "Reconciling" not in conds
    head = work.git("rev-parse", "HEAD").stdout.strip()
    assert sync["status"]["lastAppliedRevision"].endswith(head)
    assert "healthCheckDeadline" not in sync["status"]
    # History keeps what the applying pass did, though Ready came in a later pass.
    entry = sync["status"]["history"][0]
    assert entry["revision"].endswith(head) and entry["digest"].startswith("sha256:"), entry
    assert (entry["applied"], entry["lastReconciledStatus"]) == (2, "ReconciliationSucceeded"), entry
    assert len(sync["status"]["history"]) == 1, sync["status"]["history"]

    # A new revision scales the Deployment up: waiting again until its third
    # Pod is available.
    dep = _deployment("web")
    dep["spec"]["replicas"] = 3
    work.write("app.yaml", dep)
    work.push("scale")
    wait_for(lambda: "Deployment/" in _conditions(_sync(kapi_server, ns)).get("Reconciling", {}).get("message", ""),
             what="waiting on the scaled Deployment")
    _mark_available(kapi_server, ns, "web", replicas=3)
    wait_for(lambda: _conditions(_sync(kapi_server, ns)).get("Ready", {}).get("status") == "True",
             what="Ready after the new generation is available")


def test_wait_times_out_with_health_check_failed(kapi_server, tmp_path):
    """A Deployment that never becomes available fails the Sync after
    ``spec.timeout`` with HealthCheckFailed naming it; the applied objects are
    in the inventory all the same."""
    ns, work = _setup(kapi_server, tmp_path, wait=True, timeout="3s", retryInterval="1h")
    work.write("app.yaml", _deployment("stuck"))
    work.push("stuck")

    def failed():
        ready = _conditions(_sync(kapi_server, ns)).get("Ready", {})
        return ready if ready.get("reason") == "HealthCheckFailed" else None

    ready = wait_for(failed, what="HealthCheckFailed")
    assert ready["status"] == "False"
    assert "after 3s: timeout waiting for" in ready["message"]
    assert f"Deployment/{ns}/stuck status: 'InProgress'" in ready["message"]
    sync = _sync(kapi_server, ns)
    assert "Reconciling" not in _conditions(sync)
    assert [e["id"] for e in sync["status"]["inventory"]["entries"]] == [f"{ns}_stuck_apps_Deployment"]

    def warned():
        events = json.loads(kapi_server.kubectl("get", "events", "-n", ns, "-o", "json").stdout)["items"]
        return [e for e in events if e["reason"] == "HealthCheckFailed" and e["involvedObject"]["name"] == "app"]

    assert wait_for(warned, what="a HealthCheckFailed Event")[0]["type"] == "Warning"


def test_failed_job_fails_the_health_check_at_once(kapi_server, tmp_path):
    """kstatus Failed (a Job with Failed=True) ends the wait without waiting
    for the timeout: here kapi's Job controller fails the Job at once
    (``activeDeadlineSeconds: 0``, DeadlineExceeded)."""
    ns, work = _setup(kapi_server, tmp_path, wait=True, timeout="10m")
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once"},
           "spec": {"activeDeadlineSeconds": 0,
                    "template": {"spec": {"restartPolicy": "Never",
                                          "containers": [{"name": "c", "image": "busybox"}]}}}}
    work.write("job.yaml", job)
    work.push("job")
    ready = wait_for(lambda: (r := _conditions(_sync(kapi_server, ns)).get("Ready", {})).get("reason")
                     == "HealthCheckFailed" and r, what="HealthCheckFailed")
    assert ready["status"] == "False"
    assert "timeout" not in ready["message"]
    assert f"Job/{ns}/once status: 'Failed'" in ready["message"]


def test_timeout_bounds_the_apply(kapi_server, tmp_path):
    """``spec.timeout`` bounds validation and apply too, not only the wait: a
    revision of 800 new objects cannot be dry-run and applied in 1s (each is two
    registry writes), so the pass stops between two objects with a clear
    message, and the Sync retries it later."""
    ns, work = _setup(kapi_server, tmp_path, timeout="1s", retryInterval="1h")
    # One file: rendering it is quick next to 1,600 writes, even on a busy machine.
    work.write("cms.yaml", *({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm{i:04}"},
                              "data": {"v": "x"}} for i in range(800)))
    work.push("many")

    def failed():
        ready = _conditions(_sync(kapi_server, ns)).get("Ready", {})
        return ready if ready.get("reason") == "ReconciliationFailed" else None

    ready = wait_for(failed, timeout=60, what="the timeout")
    assert ready["status"] == "False"
    assert "timeout of 1s exceeded while" in ready["message"]
    assert "of 800 objects done" in ready["message"]
    sync = _sync(kapi_server, ns)
    assert "lastAppliedRevision" not in sync["status"]
    assert "Reconciling" not in _conditions(sync)


def test_manage_command_follows_the_wait(kapi_server, tmp_path):
    """``manage.py sync reconcile`` shows what the Sync waits for and ends only
    when the health checks pass, not when the objects are applied."""
    ns, work = _setup(kapi_server, tmp_path, wait=True, timeout="5m")
    work.write("app.yaml", _deployment("web"))
    work.push("deployment")
    wait_for(lambda: _conditions(_sync(kapi_server, ns)).get("Reconciling", {}).get("status") == "True",
             what="waiting on the Deployment")
    root = Path(__file__).resolve().parents[2]
    command = subprocess.Popen(
        [sys.executable, str(root / "manage.py"), "sync", "reconcile", f"{ns}/app", "--timeout", "60"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=root,
        env={**os.environ, "KAPI_DATA_DIR": str(kapi_server.data_dir), "PYTHONUNBUFFERED": "1"},
    )
    watchdog = threading.Timer(120, command.kill)
    watchdog.start()
    try:
        # The command says what it waits for (however long it takes to start),
        # and is still waiting: only then does the Deployment become available.
        seen = []
        while not any("Waiting for 1 of 1 objects to become ready" in line for line in seen):
            line = command.stdout.readline()
            assert line, (seen, command.communicate())
            seen.append(line)
        assert command.poll() is None, (seen, command.communicate())
        _mark_available(kapi_server, ns, "web")
        out, err = command.communicate(timeout=60)
    finally:
        watchdog.cancel()
        if command.poll() is None:
            command.kill()
    out = "".join(seen) + out
    assert command.returncode == 0, err
    assert f"Waiting for 1 of 1 objects to become ready: [Deployment/{ns}/web" in out
    assert "✔ revision main@sha1:" in out


def test_timeout_bounds_the_rendering(kapi_server, tmp_path):
    """Rendering is part of the pass ``spec.timeout`` bounds: a timeout too short
    for anything ends the attempt while rendering (BuildFailed, as Flux reports
    a build that did not finish) and nothing is applied."""
    ns, work = _setup(kapi_server, tmp_path, timeout="1ms", retryInterval="1h")
    for i in range(3):
        work.write(f"cm{i}.yaml", {"apiVersion": "v1", "kind": "ConfigMap",
                                   "metadata": {"name": f"cm{i}"}, "data": {"v": "x"}})
    work.push("three")

    def failed():
        ready = _conditions(_sync(kapi_server, ns)).get("Ready", {})
        return ready if ready.get("reason") == "BuildFailed" else None

    ready = wait_for(failed, timeout=60, what="the timeout while rendering")
    assert ready["status"] == "False"
    assert "timeout of 1ms exceeded while rendering revision" in ready["message"]
    assert "0 of 3 files done" in ready["message"]
    listed = json.loads(kapi_server.kubectl("get", "configmaps", "-n", ns, "-o", "json").stdout)
    assert not [i for i in listed["items"] if i["metadata"]["name"].startswith("cm")]
