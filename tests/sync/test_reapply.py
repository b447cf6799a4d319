"""Re-applying a Sync's last applied input: objects that did not drift are
compared in bulk and left alone (no write, no new resourceVersion); objects
that drifted, or were deleted, are applied again."""

from __future__ import annotations

import json
import time

from sync_gitops import Work, create, sync_namespace, unique, wait_for

API = "sync.kapi.dev/v1"


def _cm(i: int) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm{i:02}", "labels": {"tier": "a"}},
            "data": {"v": str(i), "nested": "x"}}


DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
             "template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "c", "image": "nginx:1.25",
                                                   "ports": [{"containerPort": 80}]}]}}},
}


def _versions(server, ns: str) -> dict[str, str]:
    out = json.loads(server.kubectl("get", "configmaps,deployments", "-n", ns, "-o", "json").stdout)
    return {f"{i['kind']}/{i['metadata']['name']}": i["metadata"]["resourceVersion"] for i in out["items"]
            if i["metadata"]["name"] != "kube-root-ca.crt"}


def _request(server, ns: str) -> None:
    """``sync.kapi.dev/requestedAt`` and wait until that run is handled."""
    stamp = f"t-{time.time()}"
    server.kubectl("annotate", "--overwrite", "sync/app", "-n", ns, f"sync.kapi.dev/requestedAt={stamp}")

    def handled():
        sync = json.loads(server.kubectl("get", "sync/app", "-n", ns, "-o", "json").stdout)
        ready = next((c for c in sync["status"].get("conditions") or [] if c["type"] == "Ready"), {})
        return sync["status"].get("lastHandledReconcileAt") == stamp and ready.get("status") == "True"

    wait_for(handled, what=f"requestedAt {stamp} handled")


def test_forced_reconcile_writes_nothing_but_restores_drift(kapi_server, tmp_path):
    ns = unique("reapply")
    create(
        kapi_server,
        *sync_namespace(ns),
        {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns}, "spec": {}},
        {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
         "spec": {"sourceRef": {"name": "app"}, "interval": "1h"}},
    )
    work = Work(kapi_server, ns, "app", tmp_path / ns)
    work.write("cms.yaml", *[_cm(i) for i in range(20)])
    work.write("web.yaml", DEPLOYMENT)
    work.push("twenty and a deployment")
    kapi_server.kubectl("wait", "--for=condition=Ready", "sync/app", "-n", ns, "--timeout=60s")
    wait_for(lambda: len(_versions(kapi_server, ns)) == 21, what="21 objects")
    # kapi's Deployment controller is done with it (its last status write).
    wait_for(lambda: json.loads(kapi_server.kubectl("get", "deployment", "web", "-n", ns, "-o", "json").stdout)
             .get("status", {}).get("updatedReplicas") == 1, what="the Deployment's status")

    # Unchanged input, no drift: nothing is written, not even the Deployment
    # whose containers the server defaulted (imagePullPolicy, protocol, ...).
    before = _versions(kapi_server, ns)
    _request(kapi_server, ns)
    assert _versions(kapi_server, ns) == before

    # Another manager adds a label it owns (not drift of a kapi-sync field):
    # the forced reconcile keeps it and writes nothing.
    kapi_server.kubectl("label", "configmap", "cm03", "-n", ns, "extra=kept")
    wait_for(lambda: _versions(kapi_server, ns)["ConfigMap/cm03"] != before["ConfigMap/cm03"], what="label")
    time.sleep(1.5)  # any drift reconcile the label triggered has run
    before = _versions(kapi_server, ns)
    _request(kapi_server, ns)
    assert _versions(kapi_server, ns) == before
    cm03 = json.loads(kapi_server.kubectl("get", "configmap", "cm03", "-n", ns, "-o", "json").stdout)
    assert cm03["metadata"]["labels"]["extra"] == "kept"

    # Drift of owned fields while the Sync is suspended (so only the forced
    # reconcile below can restore it): a changed value, a changed list item,
    # a deleted object. Each is applied again; the other objects are not.
    kapi_server.kubectl("patch", "sync", "app", "-n", ns, "--type=merge", "-p", '{"spec":{"suspend":true}}')
    time.sleep(1)
    kapi_server.kubectl("patch", "configmap", "cm05", "-n", ns, "--type=merge", "-p", '{"data":{"v":"drifted"}}')
    kapi_server.kubectl("patch", "deployment", "web", "-n", ns, "--type=json", "-p",
                        '[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:1"}]')
    kapi_server.kubectl("delete", "configmap", "cm07", "-n", ns)
    before = _versions(kapi_server, ns)
    kapi_server.kubectl("patch", "sync", "app", "-n", ns, "--type=merge", "-p", '{"spec":{"suspend":false}}')
    _request(kapi_server, ns)

    def restored():
        cm05 = json.loads(kapi_server.kubectl("get", "configmap", "cm05", "-n", ns, "-o", "json").stdout)
        web = json.loads(kapi_server.kubectl("get", "deployment", "web", "-n", ns, "-o", "json").stdout)
        cm07 = kapi_server.kubectl("get", "configmap", "cm07", "-n", ns, check=False)
        return (cm05["data"]["v"] == "5" and web["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"
                and cm07.returncode == 0)

    wait_for(restored, what="drift restored")
    after = _versions(kapi_server, ns)
    rewritten = {k for k in before if after.get(k) != before[k]}
    assert rewritten == {"ConfigMap/cm05", "Deployment/web"}
    assert "ConfigMap/cm07" in after
