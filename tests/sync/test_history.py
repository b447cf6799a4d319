"""status.history keeps the revisions a Sync applied; a rollback pins an
earlier one until a new revision is pushed (``sync.history``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from kapi_testserver import ROOT
from sync_gitops import Work, create, sync_namespace, unique, wait_for

API = "sync.kapi.dev/v1"


def _sync(server, ns: str) -> dict:
    return json.loads(server.kubectl("get", "sync", "app", "-n", ns, "-o", "json").stdout)


def _applied(server, ns: str, sha: str) -> dict:
    def done():
        sync = _sync(server, ns)
        ready = next((c for c in (sync.get("status") or {}).get("conditions") or [] if c["type"] == "Ready"), {})
        applied = (sync.get("status") or {}).get("lastAppliedRevision", "")
        return sync if applied.endswith(sha) and ready.get("status") == "True" else None

    return wait_for(done, what=f"revision {sha[:8]} to be applied")


def _value(server, ns: str) -> str:
    return server.kubectl("get", "cm", "web", "-n", ns, "-o", "jsonpath={.data.v}").stdout


def _manage(server, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "manage.py"), "sync", *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT,
                          env={**os.environ, "KAPI_DATA_DIR": str(server.data_dir)})


def test_history_rollback_and_a_new_push_that_moves_on(kapi_server, tmp_path):
    ns = unique("history")
    create(kapi_server, *sync_namespace(ns),
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns}, "spec": {}},
           {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
            "spec": {"sourceRef": {"name": "app"}, "historyLimit": 3}})
    work = Work(kapi_server, ns, "app", tmp_path / ns)
    shas = []
    for value in ("1", "2", "3"):
        work.write("web.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web"},
                                "data": {"v": value}})
        if value == "2":
            work.write("extra.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "extra"}})
        work.push(f"v{value}")
        shas.append(work.git("rev-parse", "HEAD").stdout.strip())
        _applied(kapi_server, ns, shas[-1])

    history = _sync(kapi_server, ns)["status"]["history"]
    assert [h["revision"] for h in history] == [f"main@sha1:{s}" for s in reversed(shas)]
    assert all(h["lastReconciledStatus"] == "ReconciliationSucceeded" for h in history)
    assert all(h["digest"].startswith("sha256:") for h in history)
    assert sorted(history[1]["changed"]) == [f"ConfigMap {ns}/extra", f"ConfigMap {ns}/web"]
    assert history[0]["changed"] == [f"ConfigMap {ns}/web"]

    # Roll back to the previous revision: v2's objects come back as they were.
    done = _manage(kapi_server, "rollback", f"{ns}/app", "--timeout", "60")
    assert done.returncode == 0, done.stderr
    assert f"pinned Sync {ns}/app to {shas[1]}" in done.stdout
    sync = _applied(kapi_server, ns, shas[1])
    assert _value(kapi_server, ns) == "2"
    assert sync["status"]["pin"] == {"revision": shas[1], "sourceRevision": f"main@sha1:{shas[2]}"}
    assert sync["metadata"]["annotations"]["sync.kapi.dev/pin"] == shas[1]
    assert len(sync["status"]["history"]) == 3  # historyLimit

    # Rolled back to a named revision, then further back still.
    done = _manage(kapi_server, "rollback", f"{ns}/app", shas[0][:10], "--timeout", "60")
    assert done.returncode == 0, done.stderr
    _applied(kapi_server, ns, shas[0])
    assert _value(kapi_server, ns) == "1"
    assert kapi_server.kubectl("get", "cm", "extra", "-n", ns, check=False).returncode != 0

    # A new push ends the pin: the Sync follows its source again.
    work.write("web.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "web"},
                            "data": {"v": "4"}})
    work.push("v4")
    head = work.git("rev-parse", "HEAD").stdout.strip()
    sync = _applied(kapi_server, ns, head)
    assert _value(kapi_server, ns) == "4"
    assert "pin" not in sync["status"]
    assert "sync.kapi.dev/pin" not in (sync["metadata"].get("annotations") or {})
    events = json.loads(kapi_server.kubectl("get", "events", "-n", ns, "-o", "json").stdout)["items"]
    assert any(e["reason"] == "Unpinned" and head in e["message"] for e in events)


def test_rollback_without_an_earlier_revision_says_so(kapi_server, tmp_path):
    ns = unique("nohistory")
    create(kapi_server, *sync_namespace(ns),
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns}, "spec": {}},
           {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
            "spec": {"sourceRef": {"name": "app"}}})
    done = _manage(kapi_server, "rollback", f"{ns}/app")
    assert done.returncode != 0
    assert "no earlier successfully applied revision" in done.stderr
