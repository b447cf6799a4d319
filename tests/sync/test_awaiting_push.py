"""A new hosted GitRepository waiting for its first push reads as waiting.

Nothing pushed yet is the normal state of a repository kapi hosts, not a
failure: the GitRepository says Ready=Unknown (AwaitingPush) with where to push,
its Sync says it waits for that push, and neither makes a Warning event (Flux's
kustomize-controller only logs a source without an artifact). The first push
then makes both Ready.
"""

from __future__ import annotations

import json

from sync_gitops import Work, create, sync_namespace, unique, wait_for

API = "sync.kapi.dev/v1"


def _get(server, kind: str, ns: str, name: str) -> dict:
    return json.loads(server.kubectl("get", kind, name, "-n", ns, "-o", "json").stdout)


def _ready(obj: dict) -> dict:
    return next((c for c in (obj.get("status") or {}).get("conditions") or () if c["type"] == "Ready"), {})


def test_new_hosted_repository_waits_for_its_first_push(kapi_server, tmp_path):
    ns = unique("await")
    create(kapi_server, *sync_namespace(ns))
    create(
        kapi_server,
        {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns}, "spec": {}},
        {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
         "spec": {"sourceRef": {"name": "app"}, "path": "./"}},
    )
    repo = wait_for(
        lambda: (r := _get(kapi_server, "gitrepository", ns, "app")) and _ready(r).get("reason") == "AwaitingPush" and r,
        what="the repository to await its first push",
    )
    ready = _ready(repo)
    assert ready["status"] == "Unknown"
    assert ready["message"] == f"waiting for the first push to /git/{ns}/app.git (branch 'main' not found)"
    assert repo["status"]["url"] == f"/git/{ns}/app.git"
    sync = wait_for(
        lambda: (s := _get(kapi_server, "sync", ns, "app")) and "first push" in _ready(s).get("message", "") and s,
        what="the Sync to wait for the push",
    )
    assert _ready(sync)["message"] == f"GitRepository {ns}/app is waiting for its first push"
    events = json.loads(kapi_server.kubectl("get", "events", "-n", ns, "-o", "json").stdout)["items"]
    assert [e for e in events if e["type"] == "Warning"] == []

    work = Work(kapi_server, ns, "app", tmp_path / ns)
    work.write("cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}})
    work.push("first")
    wait_for(lambda: _ready(_get(kapi_server, "sync", ns, "app")).get("status") == "True", timeout=60,
             what="the Sync to be Ready after the first push")
    assert _ready(_get(kapi_server, "gitrepository", ns, "app"))["status"] == "True"
