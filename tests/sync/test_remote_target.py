"""A Sync with ``spec.kubeConfig`` applies to another API server: here a
second kapi server, reached with a kubeconfig whose user (a ServiceAccount
token of the target) has rights in one namespace only.

The main server (``kapi_server``) allows loopback targets
(``KAPI_SYNC_REMOTE_ALLOWED_NETWORKS=127.0.0.0/8``), as the Alert tests allow
their receivers."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from kapi_testserver import KapiServer, free_port, serving
from sync_gitops import (
    Work,
    create,
    hosted_sync,
    namespace_deployer,
    pods_ready,
    sync_namespace,
    target_kubeconfig,
    unique,
    wait_for,
)

API = "sync.kapi.dev/v1"


@dataclass
class Target:
    server: KapiServer
    namespace: str
    token: str

    def kubeconfig(self, server: str | None = None, **user) -> str:
        return target_kubeconfig(self.server, user or {"token": self.token}, server)

    def get(self, *args: str, check: bool = True):
        out = self.server.kubectl("get", *args, "-n", self.namespace, "-o", "json", "--show-managed-fields",
                                  check=check)
        return json.loads(out.stdout) if out.returncode == 0 else None


@pytest.fixture(scope="module")
def target() -> Iterator[Target]:
    """The remote cluster: its namespace ``deploy-*`` where the ServiceAccount
    ``deployer`` may do anything, and nothing elsewhere."""
    for server in serving():
        ns = unique("deploy")
        token = namespace_deployer(server, ns)
        yield Target(server, ns, token)


def _secret(ns: str, name: str, kubeconfig: str) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": ns},
            "data": {"value": base64.b64encode(kubeconfig.encode()).decode()}}


def _remote_sync(server: KapiServer, target: Target, tmp_path, prefix: str, **spec) -> tuple[str, Work]:
    ns, work = hosted_sync(server, tmp_path, prefix, kubeConfig={"secretRef": {"name": "target"}},
                           targetNamespace=target.namespace, **spec)
    create(server, _secret(ns, "target", target.kubeconfig()))
    return ns, work


def _sync(server: KapiServer, ns: str, name: str = "app") -> dict:
    return json.loads(server.kubectl("get", "sync", name, "-n", ns, "-o", "json").stdout)


def _ready(server: KapiServer, ns: str, name: str = "app") -> dict:
    return next((c for c in (_sync(server, ns, name).get("status") or {}).get("conditions") or []
                 if c["type"] == "Ready"), {})


def _cm(name: str, **data: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def _applied(server: KapiServer, ns: str, work: Work) -> dict:
    head = work.git("rev-parse", "HEAD").stdout.strip()

    def done():
        sync = _sync(server, ns)
        ok = (sync.get("status") or {}).get("lastAppliedRevision", "").endswith(head)
        return sync if ok and _ready(server, ns).get("status") == "True" else None

    return wait_for(done, what=f"Sync {ns}/app Ready at {head[:12]}")


def test_apply_prune_and_drift_on_the_target(kapi_server, target, tmp_path):
    """The objects land on the target (not in kapi), labelled and applied by
    ``kapi-sync``; the status and ``kubectl get syncs`` name the target; a
    removed object is pruned there; an edit there is undone; deleting the
    Sync prunes what it applied there."""
    ns, work = _remote_sync(kapi_server, target, tmp_path, "remote")
    a, b = unique("a"), unique("b")
    work.write("app.yaml", _cm(a, v="1"), _cm(b, v="1"))
    work.push("two configmaps")
    sync = _applied(kapi_server, ns, work)
    live = target.get("configmap", a)
    assert live["data"] == {"v": "1"}
    assert live["metadata"]["labels"]["sync.kapi.dev/name"] == "app"
    assert {e["manager"] for e in live["metadata"]["managedFields"]} == {"kapi-sync"}
    assert kapi_server.kubectl("get", "configmap", a, "-n", target.namespace, check=False).returncode != 0
    assert sync["status"]["target"]["server"] == target.server.url
    assert sync["status"]["target"]["version"].startswith("v1.")
    table = kapi_server.kubectl("get", "syncs", "-n", ns).stdout
    assert "TARGET" in table and target.server.url in table

    work.write("app.yaml", _cm(a, v="2"))
    work.push("drop b")
    _applied(kapi_server, ns, work)
    assert target.get("configmap", a)["data"] == {"v": "2"}
    wait_for(lambda: target.get("configmap", b, check=False) is None, what="b pruned on the target")

    # Drift: another manager's edit on the target is restored.
    target.server.kubectl("patch", "configmap", a, "-n", target.namespace, "--type=merge",
                          "-p", json.dumps({"data": {"v": "edited"}}))
    wait_for(lambda: target.get("configmap", a)["data"] == {"v": "2"}, what="drift on the target restored")

    # Deleting the Sync prunes its inventory on the target.
    kapi_server.kubectl("delete", "sync", "app", "-n", ns, "--wait=false")
    wait_for(lambda: target.get("configmap", a, check=False) is None, what="a pruned when the Sync is deleted")


def _watches_on(target: Target, resource: str) -> float:
    """How many watches of ``resource`` the target serves now (its
    ``apiserver_longrunning_requests``, summed over its API processes)."""
    import requests

    metrics = requests.get(target.server.url + "/metrics", verify=str(target.server.ca_path), timeout=30,
                           headers={"Authorization": f"Bearer {target.server.token}"})
    metrics.raise_for_status()
    return sum(float(line.rsplit(" ", 1)[1]) for line in metrics.text.splitlines()
               if line.startswith("apiserver_longrunning_requests{") and 'verb="WATCH"' in line
               and f'resource="{resource}"' in line)


def _watched_from_both_workers(server: KapiServer, target: Target, ns: str, before: float) -> None:
    """Force passes of Sync ``ns/app`` until both Celery pool processes have
    run one, and so both watch its ServiceAccounts on the target."""
    for attempt in range(40):
        if _watches_on(target, "serviceaccounts") >= before + 2:
            break
        stamp = f"pass-{attempt}"
        server.kubectl("annotate", "sync", "app", "-n", ns, f"sync.kapi.dev/requestedAt={stamp}", "--overwrite")
        wait_for(lambda s=stamp: (_sync(server, ns).get("status") or {}).get("lastHandledReconcileAt") == s,
                 what=f"pass {stamp}")
    assert _watches_on(target, "serviceaccounts") == before + 2, "passes never ran in both pool processes"


def test_a_deleted_sync_leaves_no_watch_on_the_target_in_any_worker(kapi_server, target, tmp_path):
    """A Sync's passes run in either Celery pool process, and each process
    that ran one watches the Sync's types on the target. Deleting the Sync
    ends every one of those watches, not only the one in the process that
    ran its last pass: a deleted Sync keeps no connection, with its
    credentials, to its old target."""
    ns, work = _remote_sync(kapi_server, target, tmp_path, "unwatch")
    account = unique("sa")  # a kind only this test applies: its watches are this Sync's
    work.write("app.yaml", {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account}})
    work.push("a service account")
    _applied(kapi_server, ns, work)
    _watched_from_both_workers(kapi_server, target, ns, before=0)

    kapi_server.kubectl("delete", "sync", "app", "-n", ns)
    wait_for(lambda: target.get("serviceaccount", account, check=False) is None, what="pruned on the target")
    wait_for(lambda: _watches_on(target, "serviceaccounts") == 0, timeout=40,
             what="no watch of the deleted Sync left on the target")


def test_a_retargeted_sync_leaves_no_watch_on_its_old_target(kapi_server, target, tmp_path):
    """Pointing a Sync at another cluster (another kubeconfig Secret) moves
    its drift watches there: the old target serves none of them any more,
    from either pool process, so the Sync keeps no connection, with the old
    credentials, to a cluster it no longer applies to."""
    before = _watches_on(target, "serviceaccounts")
    ns, work = _remote_sync(kapi_server, target, tmp_path, "retarget")
    account = unique("sa")
    work.write("app.yaml", {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": account}})
    work.push("a service account")
    _applied(kapi_server, ns, work)
    _watched_from_both_workers(kapi_server, target, ns, before)

    # The new target: the main server itself, where a deployer of a
    # namespace of the same name may apply what the Sync applied before.
    token = namespace_deployer(kapi_server, target.namespace)
    create(kapi_server, _secret(ns, "elsewhere", target_kubeconfig(kapi_server, {"token": token})))
    kapi_server.kubectl("patch", "sync", "app", "-n", ns, "--type=merge",
                        "-p", json.dumps({"spec": {"kubeConfig": {"secretRef": {"name": "elsewhere"}}}}))
    wait_for(lambda: kapi_server.kubectl("get", "serviceaccount", account, "-n", target.namespace,
                                         check=False).returncode == 0,
             what="the service account applied on the new target")
    assert (_sync(kapi_server, ns)["status"]["target"] or {}).get("server") == kapi_server.url
    wait_for(lambda: _watches_on(target, "serviceaccounts") == before, timeout=40,
             what="no watch of the retargeted Sync left on its old target")


def test_a_forbidden_object_fails_the_whole_revision(kapi_server, target, tmp_path):
    """An object the kubeconfig's user may not write on the target (outside
    its namespace) fails the revision: nothing of it is applied, the
    target's 403 names the object. The push (validated on the target) is
    refused the same way."""
    ns, work = _remote_sync(kapi_server, target, tmp_path, "forbid")
    ok, role = unique("ok"), unique("role")
    cluster_role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                    "metadata": {"name": role}, "rules": []}
    work.write("app.yaml", _cm(ok, v="1"), cluster_role)
    pushed = work.push("a cluster role", check=False)
    assert pushed.returncode != 0
    assert f"ClusterRole.rbac.authorization.k8s.io {role}" in pushed.stderr
    assert "forbidden" in pushed.stderr

    kapi_server.kubectl("patch", "gitrepository", "app", "-n", ns, "--type=merge",
                        "-p", '{"spec": {"validateOnPush": false}}')
    work.push("again, unvalidated")
    ready = wait_for(lambda: (r := _ready(kapi_server, ns)).get("reason") == "ValidationFailed" and r,
                     what="ValidationFailed")
    assert f"ClusterRole.rbac.authorization.k8s.io {role}" in ready["message"]
    assert "forbidden" in ready["message"]
    assert target.get("configmap", ok, check=False) is None


def test_targets_that_cannot_be_used(kapi_server, target, tmp_path):
    """An unreachable server, an address outside the allowed networks, an
    exec plugin, insecure-skip-tls-verify: TargetFailed, saying why."""
    ns, work = _remote_sync(kapi_server, target, tmp_path, "unusable")
    cases = {
        "down": (target.kubeconfig(server=f"https://127.0.0.1:{free_port()}"), "cannot be reached"),
        "metadata": (target.kubeconfig(server="http://169.254.169.254"), "may not reach"),
        "exec": (target.kubeconfig(exec={"apiVersion": "client.authentication.k8s.io/v1", "command": "id"}),
                 "exec plugins are not allowed"),
    }
    for name, (kubeconfig, _) in cases.items():
        create(kapi_server, _secret(ns, name, kubeconfig),
               {"apiVersion": API, "kind": "Sync", "metadata": {"name": name, "namespace": ns},
                "spec": {"sourceRef": {"name": "app"}, "kubeConfig": {"secretRef": {"name": name}}}})
    work.write("app.yaml", _cm("c", v="1"))
    kapi_server.kubectl("patch", "gitrepository", "app", "-n", ns, "--type=merge",
                        "-p", '{"spec": {"validateOnPush": false}}')
    work.push("one configmap")
    for name, (_, why) in cases.items():
        ready = wait_for(lambda n=name: (r := _ready(kapi_server, ns, n)).get("reason") == "TargetFailed" and r,
                         what=f"Sync {name} TargetFailed")
        assert why in ready["message"], ready
        assert target.token not in ready["message"]


def test_health_on_the_target_and_push_wait(kapi_server, target, tmp_path):
    """``spec.wait`` waits for health on the target; ``git push -o wait``
    returns once the Sync is Ready there, after the plan of the dry run on
    the target."""
    ns, work = _remote_sync(kapi_server, target, tmp_path, "rwait", wait=True, timeout="2m")
    app = unique("web")
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": app},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": app}},
                 "template": {"metadata": {"labels": {"app": app}},
                              "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}},
    }
    work.write("app.yaml", deployment)
    work.git("add", "-A")
    work.git("commit", "-q", "-m", "deployment")
    import threading

    result = {}
    push = threading.Thread(target=lambda: result.setdefault(
        "done", work.git("push", "-o", "wait=1m", "origin", "HEAD:main", check=False)))
    push.start()
    wait_for(lambda: "Deployment/" in json.dumps(_sync(kapi_server, ns).get("status") or {}),
             what="the Sync waiting on the Deployment")
    pods_ready(target.server, target.namespace, app, 1)
    push.join(90)
    done = result["done"]
    assert done.returncode == 0, done.stderr
    assert f"Deployment.apps {target.namespace}/{app}" in done.stderr  # the plan, from the target
    assert f"Sync {ns}/app: Ready" in done.stderr


def test_service_account_name_impersonates_on_the_target(kapi_server, target, tmp_path):
    """With ``spec.serviceAccountName``, the kubeconfig's user impersonates
    that ServiceAccount (of the Sync's namespace) on the target: its rights
    there decide (ConfigMaps only here), and the refusal names it."""
    ns = unique("imp")
    account = f"system:serviceaccount:{ns}:app-sa"
    target.server.kubectl("create", "clusterrole", f"impersonate-{ns}", "--verb=impersonate",
                          "--resource=serviceaccounts")
    target.server.kubectl("create", "clusterrolebinding", f"impersonate-{ns}", f"--clusterrole=impersonate-{ns}",
                          f"--serviceaccount={target.namespace}:deployer")
    target.server.kubectl("create", "role", f"cm-{ns}", "-n", target.namespace, "--verb=*",
                          "--resource=configmaps")
    target.server.kubectl("create", "rolebinding", f"cm-{ns}", "-n", target.namespace, f"--role=cm-{ns}",
                          f"--serviceaccount={ns}:app-sa")
    create(kapi_server, *sync_namespace(ns, "app-sa"), _secret(ns, "target", target.kubeconfig()),
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns}, "spec": {}},
           {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
            "spec": {"sourceRef": {"name": "app"}, "serviceAccountName": "app-sa",
                     "targetNamespace": target.namespace, "kubeConfig": {"secretRef": {"name": "target"}}}})
    work = Work(kapi_server, ns, "app", tmp_path / ns)
    cm, secret = unique("cm"), unique("s")
    work.write("app.yaml", _cm(cm, v="1"),
               {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": secret}, "stringData": {"k": "v"}})
    refused = work.push("a secret", check=False)
    assert refused.returncode != 0
    assert f"Secret {target.namespace}/{secret}" in refused.stderr and account in refused.stderr, refused.stderr
    work.write("app.yaml", _cm(cm, v="1"))
    work.push("the configmap only")
    _applied(kapi_server, ns, work)
    assert target.get("configmap", cm)["data"] == {"v": "1"}
