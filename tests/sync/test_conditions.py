"""``Reconciling`` and ``Stalled`` on Syncs and GitRepositories, observed with
a real watch (the kubernetes Python client) on a real server and workers."""

from __future__ import annotations

import json

from kubernetes import client, watch
from sync_gitops import Work, create, sync_namespace, unique, wait_for

GROUP, VERSION = "sync.kapi.dev", "v1"
API = f"{GROUP}/{VERSION}"


def _conditions(obj: dict) -> dict[str, dict]:
    return {c["type"]: c for c in (obj.get("status") or {}).get("conditions") or []}


def _history(api_client, ns: str, plural: str, name: str, since: str, until) -> list[dict]:
    """Every state of one object from resourceVersion ``since`` on, until
    ``until(obj)`` holds (a real watch: no state is missed, unlike polling)."""
    api = client.CustomObjectsApi(api_client)
    seen: list[dict] = []
    stream = watch.Watch().stream(api.list_namespaced_custom_object, GROUP, VERSION, ns, plural,
                                  resource_version=since, field_selector=f"metadata.name={name}",
                                  timeout_seconds=60)
    for event in stream:
        seen.append(event["object"])
        if until(event["object"]):
            break
    return seen


def _create(server, *docs: dict) -> dict[str, str]:
    """Create ``docs``; the resourceVersion of each by name."""
    out = server.kubectl("create", "-o", "json", "-f", "-", input="\n---\n".join(json.dumps(d) for d in docs))
    parsed = json.loads(out.stdout)
    items = parsed["items"] if parsed.get("kind") == "List" else [parsed]
    return {i["metadata"]["name"]: i["metadata"]["resourceVersion"] for i in items}


def test_repository_and_sync_report_reconciling_while_they_work(kapi_server, k8s_api_client, tmp_path):
    ns = unique("cond")
    create(kapi_server, *sync_namespace(ns))
    versions = _create(kapi_server, {"apiVersion": API, "kind": "GitRepository",
                                     "metadata": {"name": "app", "namespace": ns}, "spec": {}})
    # An empty hosted repository has no branch yet: the first fetch ends
    # Ready=False; what matters is Reconciling while it ran and gone after.
    history = _history(k8s_api_client, ns, "gitrepositories", "app", versions["app"],
                       lambda o: "Ready" in _conditions(o) and "Reconciling" not in _conditions(o))
    reconciling = [_conditions(o)["Reconciling"] for o in history if "Reconciling" in _conditions(o)]
    assert reconciling, "no state with Reconciling"
    assert reconciling[0]["status"] == "True" and reconciling[0]["reason"] == "Progressing"
    assert reconciling[0]["message"].startswith(f"Fetching /git/{ns}/app.git")
    assert "Reconciling" not in _conditions(history[-1])

    work = Work(kapi_server, ns, "app", tmp_path / ns)
    work.write("cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}})
    work.push("one")
    versions = _create(kapi_server, {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
                                     "spec": {"sourceRef": {"name": "app"}}})
    history = _history(k8s_api_client, ns, "syncs", "app", versions["app"],
                       lambda o: _conditions(o).get("Ready", {}).get("status") == "True")
    states = [_conditions(o) for o in history]
    working = [s for s in states if s.get("Reconciling", {}).get("status") == "True"]
    assert working, "no state with Reconciling=True"
    head = work.git("rev-parse", "HEAD").stdout.strip()
    assert working[0]["Reconciling"]["reason"] == "Progressing"
    assert working[0]["Reconciling"]["message"].startswith("Applying revision main@sha1:" + head)
    assert working[0]["Ready"]["status"] == "Unknown"
    assert "Reconciling" not in states[-1] and "Stalled" not in states[-1]
    kapi_server.kubectl("get", "configmap", "c", "-n", ns)


def test_a_path_outside_the_repository_stalls_until_the_spec_changes(kapi_server, tmp_path):
    """Only a spec change can fix spec.path '../x': Stalled=True and no retry;
    fixing the path reconciles and clears Stalled."""
    ns = unique("stall")
    create(
        kapi_server,
        *sync_namespace(ns),
        {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns}, "spec": {}},
    )
    work = Work(kapi_server, ns, "app", tmp_path / ns)
    work.write("cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}})
    work.push("one")
    create(kapi_server, {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
                         "spec": {"sourceRef": {"name": "app"}, "path": "../elsewhere"}})

    def sync() -> dict:
        return json.loads(kapi_server.kubectl("get", "syncs", "app", "-n", ns, "-o", "json").stdout)

    stalled = wait_for(lambda: _conditions(sync()).get("Stalled"), what="Stalled")
    assert stalled["status"] == "True"
    assert stalled["reason"] == "BuildFailed"
    assert "'../elsewhere' is outside the repository" in stalled["message"]
    conds = _conditions(sync())
    assert conds["Ready"]["status"] == "False" and "Reconciling" not in conds
    assert kapi_server.kubectl("get", "configmap", "c", "-n", ns, check=False).returncode != 0

    kapi_server.kubectl("patch", "sync", "app", "-n", ns, "--type=merge", "-p", '{"spec":{"path":"./"}}')
    kapi_server.kubectl("wait", "--for=condition=Ready", "sync/app", "-n", ns, "--timeout=30s")
    assert "Stalled" not in _conditions(sync())
    kapi_server.kubectl("get", "configmap", "c", "-n", ns)
