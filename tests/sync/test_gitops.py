"""GitOps end to end: real git, the real server and its Celery workers.

A hosted GitRepository and a Sync; manifests pushed with git over smart HTTP
are applied by server-side apply as ``kapi-sync``, pruned when removed,
restored when edited, and refused at push time when invalid.
"""

from __future__ import annotations

import json
import subprocess

from sync_gitops import Work, create, sync_namespace, unique, wait_for

API = "sync.kapi.dev/v1"

CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.gitops.kapi.test"},
    "spec": {
        "group": "gitops.kapi.test",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}},
        }],
    },
}


def _namespace(server) -> str:
    ns = unique("gitops")
    create(server, *sync_namespace(ns))
    return ns


def _setup(server, tmp_path, ns: str, name: str = "app", path: str = "./deploy", **repo_spec):
    create(
        server,
        {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": name, "namespace": ns},
         "spec": repo_spec},
        {"apiVersion": API, "kind": "Sync", "metadata": {"name": name, "namespace": ns},
         "spec": {"sourceRef": {"kind": "GitRepository", "name": name}, "path": path}},
    )
    return Work(server, ns, name, tmp_path / f"{ns}-{name}")


def _get(server, *args: str) -> dict | None:
    done = server.kubectl("get", *args, "-o", "json", check=False)
    return json.loads(done.stdout) if done.returncode == 0 else None


def _ready(server, ns: str, name: str, revision_of: Work | None = None):
    def check():
        sync = _get(server, "syncs", name, "-n", ns) or {}
        status = sync.get("status") or {}
        ready = next((c for c in status.get("conditions") or [] if c["type"] == "Ready"), {})
        if revision_of is not None:
            head = revision_of.git("rev-parse", "HEAD").stdout.strip()
            if not status.get("lastAttemptedRevision", "").endswith(head):
                return None
        return sync if ready.get("status") in ("True", "False") else None

    return wait_for(check, what=f"Sync {ns}/{name} to settle")


def _condition(sync: dict) -> dict:
    return next(c for c in sync["status"]["conditions"] if c["type"] == "Ready")


def test_push_apply_prune_drift_and_invalid_push(kapi_server, tmp_path):
    """A push of a Namespace, ConfigMaps, a Deployment, a CRD and a custom
    resource is applied (kubectl wait works); removing a file prunes its object;
    an edit by another manager is restored; an invalid push is refused with the
    field path in git's output and changes nothing."""
    ns = _namespace(kapi_server)
    app_ns = unique("app")
    work = _setup(kapi_server, tmp_path, ns)
    work.write("deploy/00-ns.yaml", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": app_ns}})
    work.write(
        "deploy/config.yaml",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "one", "namespace": app_ns},
         "data": {"color": "blue"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "two", "namespace": app_ns},
         "data": {"size": "L"}},
    )
    work.write("deploy/web/deployment.yml", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": app_ns},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}},
    })
    work.write("deploy/crd.yaml", CRD)
    work.write("deploy/widget.json", json.dumps(
        {"apiVersion": "gitops.kapi.test/v1", "kind": "Widget", "metadata": {"name": "w1", "namespace": app_ns},
         "spec": {"size": 3}}))
    work.push("first")
    kapi_server.kubectl("wait", "--for=condition=Ready", "sync/app", "-n", ns, "--timeout=30s")
    sync = _ready(kapi_server, ns, "app", work)
    assert _condition(sync)["reason"] == "ReconciliationSucceeded"
    ids = {e["id"] for e in sync["status"]["inventory"]["entries"]}
    assert f"{app_ns}_web_apps_Deployment" in ids and "_widgets.gitops.kapi.test_apiextensions.k8s.io_CustomResourceDefinition" in ids
    assert f"{app_ns}_w1_gitops.kapi.test_Widget" in ids and len(ids) == 6
    assert sync["status"]["applied"] == 6
    cm = _get(kapi_server, "configmap", "one", "-n", app_ns, "--show-managed-fields")
    assert cm["data"] == {"color": "blue"}
    assert cm["metadata"]["labels"] == {"sync.kapi.dev/name": "app", "sync.kapi.dev/namespace": ns}
    managers = {(m["manager"], m["operation"]) for m in cm["metadata"]["managedFields"]}
    assert managers == {("kapi-sync", "Apply")}
    assert _get(kapi_server, "widgets.gitops.kapi.test", "w1", "-n", app_ns)["spec"] == {"size": 3}
    table = kapi_server.kubectl("get", "syncs,gitrepositories", "-n", ns).stdout
    assert "READY" in table and "REVISION" in table and "main@sha1:" in table

    # Prune: the second ConfigMap goes, the rest stays.
    work.write("deploy/config.yaml", {"apiVersion": "v1", "kind": "ConfigMap",
                                      "metadata": {"name": "one", "namespace": app_ns},
                                      "data": {"color": "blue"}})
    work.push("drop two")
    sync = _ready(kapi_server, ns, "app", work)
    assert sync["status"]["pruned"] == 1
    assert _get(kapi_server, "configmap", "two", "-n", app_ns) is None
    assert _get(kapi_server, "configmap", "one", "-n", app_ns) is not None

    # Drift: another manager changes an owned field; the Sync restores it.
    kapi_server.kubectl("patch", "configmap", "one", "-n", app_ns, "--type=merge",
                        "-p", '{"data":{"color":"red"}}')
    wait_for(lambda: (_get(kapi_server, "configmap", "one", "-n", app_ns) or {}).get("data") == {"color": "blue"},
             timeout=10, what="drift to be corrected")

    # An invalid manifest: the push is refused, naming object and field.
    before = _get(kapi_server, "deployment", "web", "-n", app_ns)["metadata"]["resourceVersion"]
    work.write("deploy/web/deployment.yml", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": app_ns},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx:1.27", "portz": 80}]}}},
    })
    done = work.push("typo", check=False)
    assert done.returncode != 0
    assert "remote: kapi: Sync" in done.stderr
    assert f"Deployment.apps {app_ns}/web" in done.stderr
    assert "spec.template.spec.containers[0].portz" in done.stderr
    assert "pre-receive hook declined" in done.stderr
    remote_head = work.git("ls-remote", "origin", "refs/heads/main").stdout.split()[0]
    assert remote_head != work.git("rev-parse", "HEAD").stdout.strip()
    assert _get(kapi_server, "deployment", "web", "-n", app_ns)["metadata"]["resourceVersion"] == before


def test_validate_on_push_off_reports_validation_failed(kapi_server, tmp_path):
    """With validateOnPush: false an invalid revision is accepted by git, and the
    Sync goes Ready=False ValidationFailed without applying any object of it."""
    ns = _namespace(kapi_server)
    work = _setup(kapi_server, tmp_path, ns, validateOnPush=False)
    work.write("deploy/ok.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fine"},
                                  "data": {"a": "1"}})
    work.write("deploy/bad.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name"}})
    work.push("bad")
    sync = _ready(kapi_server, ns, "app", work)
    ready = _condition(sync)
    assert (ready["status"], ready["reason"]) == ("False", "ValidationFailed")
    assert "ConfigMap" in ready["message"] and "Bad_Name" in ready["message"]
    assert _get(kapi_server, "configmap", "fine", "-n", ns) is None


def test_bad_input_ends_as_conditions(kapi_server, tmp_path):
    """YAML that does not parse, a document without kind, and a symlink out of
    the checkout end as BuildFailed with messages naming the files."""
    ns = _namespace(kapi_server)
    work = _setup(kapi_server, tmp_path, ns, validateOnPush=False)
    work.write("deploy/broken.yaml", "a: [unclosed\n")
    work.write("deploy/nokind.yaml", {"apiVersion": "v1", "metadata": {"name": "x"}})
    (work.path / "deploy" / "escape.yaml").symlink_to("/etc/hostname")
    work.push("bad input")
    sync = _ready(kapi_server, ns, "app", work)
    ready = _condition(sync)
    assert ready["reason"] == "BuildFailed"
    assert "deploy/broken.yaml: cannot parse" in ready["message"]
    assert "deploy/nokind.yaml: missing kind" in ready["message"]
    assert "deploy/escape.yaml: symlink points outside the repository" in ready["message"]


def test_kustomization_directory(kapi_server, tmp_path):
    """A path with kustomization.yaml is built with kubectl kustomize."""
    ns = _namespace(kapi_server)
    work = _setup(kapi_server, tmp_path, ns, path="./k")
    work.write("k/kustomization.yaml", {"resources": ["cm.yaml"], "namePrefix": "pre-",
                                        "commonLabels": {"tier": "k"}})
    work.write("k/cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "conf"},
                             "data": {"x": "y"}})
    work.push("kustomize")
    sync = _ready(kapi_server, ns, "app", work)
    assert _condition(sync)["status"] == "True", _condition(sync)
    cm = _get(kapi_server, "configmap", "pre-conf", "-n", ns)
    assert cm["metadata"]["labels"]["tier"] == "k"


def test_depends_on_and_suspend(kapi_server, tmp_path):
    """A Sync waits for its dependsOn to be Ready; a suspended Sync applies
    nothing until resumed, then applies the latest revision."""
    ns = _namespace(kapi_server)
    work = _setup(kapi_server, tmp_path, ns, path="./base")
    create(kapi_server, {"apiVersion": API, "kind": "Sync", "metadata": {"name": "second", "namespace": ns},
                         "spec": {"sourceRef": {"name": "app"}, "path": "./apps", "suspend": True,
                                  "dependsOn": [{"name": "app"}]}})
    work.write("base/a.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "base"}})
    work.write("apps/b.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "app"}})
    work.push("two paths")
    _ready(kapi_server, ns, "app", work)
    import time

    time.sleep(2)
    assert _get(kapi_server, "configmap", "app", "-n", ns) is None  # suspended
    kapi_server.kubectl("patch", "sync", "second", "-n", ns, "--type=merge", "-p", '{"spec":{"suspend":false}}')
    sync = _ready(kapi_server, "second" and ns, "second", work)
    assert _condition(sync)["status"] == "True"
    assert _get(kapi_server, "configmap", "app", "-n", ns) is not None

    # A dependency that is not Ready holds the dependant.
    create(kapi_server, {"apiVersion": API, "kind": "Sync", "metadata": {"name": "third", "namespace": ns},
                         "spec": {"sourceRef": {"name": "app"}, "path": "./apps",
                                  "dependsOn": [{"name": "missing"}]}})
    sync = _ready(kapi_server, ns, "third")
    assert _condition(sync)["reason"] == "DependencyNotReady"


def test_two_syncs_claiming_one_object(kapi_server, tmp_path):
    """An object already labelled as another Sync's is not taken over: conflict."""
    ns = _namespace(kapi_server)
    work = _setup(kapi_server, tmp_path, ns, path="./a")
    create(kapi_server, {"apiVersion": API, "kind": "Sync", "metadata": {"name": "other", "namespace": ns},
                         "spec": {"sourceRef": {"name": "app"}, "path": "./b"}})
    shared = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "shared"}, "data": {"by": "a"}}
    work.write("a/x.yaml", shared)
    work.write("b/README.md", "nothing yet")
    work.push("a only")
    _ready(kapi_server, ns, "app", work)
    work.write("b/x.yaml", {**shared, "data": {"by": "b"}})
    work.push("b too", check=False)  # refused at push: the object belongs to Sync "app"
    done = work.push("again", check=False)
    assert "already managed by Sync" in done.stderr
    assert _get(kapi_server, "configmap", "shared", "-n", ns)["data"] == {"by": "a"}


def test_deleting_a_sync_prunes_its_inventory(kapi_server, tmp_path):
    """Deleting a Sync with prune: true deletes its objects first (finalizer run
    by the workers); an object annotated prune: disabled is kept."""
    ns = _namespace(kapi_server)
    work = _setup(kapi_server, tmp_path, ns)
    work.write("deploy/a.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "gone"}})
    work.write("deploy/b.yaml", {"apiVersion": "v1", "kind": "ConfigMap",
                                 "metadata": {"name": "kept", "annotations": {"sync.kapi.dev/prune": "disabled"}}})
    work.push("two")
    _ready(kapi_server, ns, "app", work)
    kapi_server.kubectl("delete", "sync", "app", "-n", ns, "--timeout=30s")
    assert _get(kapi_server, "sync", "app", "-n", ns) is None
    assert _get(kapi_server, "configmap", "gone", "-n", ns) is None
    assert _get(kapi_server, "configmap", "kept", "-n", ns) is not None


def test_requested_at_and_manage_command(kapi_server, tmp_path):
    """manage.py sync reconcile sets requestedAt and follows the Sync to the end."""
    ns = _namespace(kapi_server)
    work = _setup(kapi_server, tmp_path, ns)
    work.write("deploy/a.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})
    work.push("one")
    _ready(kapi_server, ns, "app", work)
    import os
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, str(root / "manage.py"), "sync", "reconcile", f"{ns}/app", "--timeout", "30"],
        capture_output=True, text=True, timeout=60, cwd=root,
        env={**os.environ, "KAPI_DATA_DIR": str(kapi_server.data_dir)},
    )
    assert done.returncode == 0, done.stderr
    assert "requested reconcile" in done.stdout and "✔ revision main@sha1:" in done.stdout


def test_reconcile_metrics_and_log(kapi_server, tmp_path):
    """A reconciled Sync and its GitRepository have Flux's gotk_* series on
    /metrics, and each pass logs one kapi.reconcile line."""
    import json
    import time

    ns = _namespace(kapi_server)
    work = _setup(kapi_server, tmp_path, ns)
    work.write("deploy/cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": "m"}, "data": {"x": "y"}})
    work.push("metrics")
    _ready(kapi_server, ns, "app", work)
    wanted = [
        f'gotk_reconcile_condition{{kind="Sync",name="app",namespace="{ns}",status="True",type="Ready"}} 1.0',
        f'gotk_suspend_status{{kind="Sync",name="app",namespace="{ns}"}} 0.0',
        f'gotk_reconcile_duration_seconds_count{{kind="Sync",name="app",namespace="{ns}"}}',
        f'gotk_reconcile_duration_seconds_count{{kind="GitRepository",name="app",namespace="{ns}"}}',
    ]
    deadline = time.monotonic() + 10
    while True:
        text = kapi_server.kubectl("get", "--raw", "/metrics").stdout
        missing = [w for w in wanted if w not in text]
        if not missing or time.monotonic() > deadline:
            break
        time.sleep(0.3)
    assert not missing, missing
    lines = [json.loads(line) for line in kapi_server.output().splitlines()
             if line.startswith("{") and '"kapi.reconcile"' in line and ns in line]
    assert any(line["kind"] == "Sync" and line["ready"] == "True" and line["revision"]
               for line in lines), lines
