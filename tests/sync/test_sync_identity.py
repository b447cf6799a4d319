"""A Sync never does more than the person behind it may (``sync.identity``),
never prunes everything or a Namespace without an explicit allow
(``sync.pruneguard``), and applies exactly the pushed revision."""

from __future__ import annotations

import json

from sync_gitops import Work, create, sync_namespace, unique, wait_for

API = "sync.kapi.dev/v1"


def _cm(name: str, namespace: str | None = None, **data: str) -> dict:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data or {"v": "1"}}


def _tenant(server, tmp_path, *extra: dict, sync_spec: dict | None = None) -> tuple[str, Work]:
    """A namespace whose ``default`` ServiceAccount is only the namespace's
    ``admin`` (what a namespace owner could grant), a hosted repository and a
    Sync without ``serviceAccountName``."""
    ns = unique("tenant")
    create(server,
           {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
           {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "sync-admin", "namespace": ns},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": ns}]},
           *extra,
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns}, "spec": {}},
           {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
            "spec": {"sourceRef": {"name": "app"}, **(sync_spec or {})}})
    return ns, Work(server, ns, "app", tmp_path / ns)


def _sync(server, ns: str, name: str = "app") -> dict:
    return json.loads(server.kubectl("get", "sync", name, "-n", ns, "-o", "json").stdout)


def _settled(server, ns: str, work: Work, name: str = "app") -> dict:
    """The Sync's Ready condition once it has attempted ``work``'s HEAD."""
    head = work.git("rev-parse", "HEAD").stdout.strip()

    def check():
        status = _sync(server, ns, name).get("status") or {}
        if not status.get("lastAttemptedRevision", "").endswith(head):
            return None
        ready = next((c for c in status.get("conditions") or [] if c["type"] == "Ready"), {})
        return ready if ready.get("status") in ("True", "False") else None

    return wait_for(check, what=f"Sync {ns}/{name} to settle on {head[:8]}")


def _exists(server, *args: str) -> bool:
    return server.kubectl("get", *args, check=False).returncode == 0


def test_a_tenant_sync_cannot_create_a_clusterrolebinding(kapi_server, tmp_path):
    """A Sync without serviceAccountName acts as its namespace's default
    ServiceAccount, not as the controller: a revision with a
    ClusterRoleBinding (cluster-admin for the tenant) ends Ready=False with
    kube's 403 text naming the object and the verb, and applies nothing of the
    revision; its namespaced objects alone then apply."""
    ns, work = _tenant(kapi_server, tmp_path)
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": f"{ns}-takeover"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
               "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": ns}]}
    work.write("cm.yaml", _cm("mine"))
    work.write("crb.yaml", binding)
    done = work.push("take over", check=False)
    assert done.returncode != 0, "the push-time validation should refuse it"
    assert (f'clusterrolebindings.rbac.authorization.k8s.io "{ns}-takeover" is forbidden: '
            f'User "system:serviceaccount:{ns}:default" cannot patch resource "clusterrolebindings" '
            f'in API group "rbac.authorization.k8s.io" at the cluster scope') in done.stderr

    # Pushed past the validation (validateOnPush: false), the Sync refuses it.
    kapi_server.kubectl("patch", "gitrepository", "app", "-n", ns, "--type=merge",
                        "-p", '{"spec":{"validateOnPush":false}}')
    work.push("take over, unvalidated")
    ready = _settled(kapi_server, ns, work)
    assert ready["status"] == "False" and ready["reason"] == "ReconciliationFailed"
    assert f'clusterrolebindings.rbac.authorization.k8s.io "{ns}-takeover" is forbidden' in ready["message"]
    assert "cannot patch resource" in ready["message"]
    assert not _exists(kapi_server, "clusterrolebinding", f"{ns}-takeover")
    assert not _exists(kapi_server, "configmap", "mine", "-n", ns)

    work.remove("crb.yaml")
    work.push("only mine")
    assert _settled(kapi_server, ns, work)["status"] == "True"
    assert _exists(kapi_server, "configmap", "mine", "-n", ns)


def test_objects_in_another_namespace_are_refused(kapi_server, tmp_path):
    """A tenant's Sync cannot write into another tenant's namespace, and a push
    cannot probe it: an existing and a missing namespace, a valid and an
    invalid object all get the same 403 line, never a validation result."""
    victim = unique("victim")
    create(kapi_server, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": victim}},
           _cm("secret-plans", victim))
    ns, work = _tenant(kapi_server, tmp_path)
    missing = unique("nowhere")
    work.write("probe.yaml",
               {**_cm("secret-plans", victim), "data": {"v": 1}},   # invalid: a number
               _cm("other", missing))
    done = work.push("probe", check=False)
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if f"Sync {ns}/app" in line]
    assert len(lines) == 2, done.stderr
    assert f'configmaps "secret-plans" is forbidden: User "system:serviceaccount:{ns}:default" ' \
           f'cannot patch resource "configmaps" in API group "" in the namespace "{victim}"' in lines[0]
    assert f'in the namespace "{missing}"' in lines[1] and "is forbidden" in lines[1]
    assert "not found" not in done.stderr and "Invalid" not in done.stderr and "data" not in "".join(lines)
    data = json.loads(kapi_server.kubectl("get", "cm", "secret-plans", "-n", victim, "-o", "json").stdout)["data"]
    assert data == {"v": "1"}


def test_a_service_account_without_bindings_applies_nothing(kapi_server, tmp_path):
    """spec.serviceAccountName names a ServiceAccount nobody bound: nothing is
    applied, and the message says which verb it lacks."""
    ns, work = _tenant(kapi_server, tmp_path, sync_spec={"serviceAccountName": "nobody"})
    kapi_server.kubectl("patch", "gitrepository", "app", "-n", ns, "--type=merge",
                        "-p", '{"spec":{"validateOnPush":false}}')
    work.write("cm.yaml", _cm("one"))
    work.push("one")
    ready = _settled(kapi_server, ns, work)
    assert ready["status"] == "False"
    assert (f'configmaps "one" is forbidden: User "system:serviceaccount:{ns}:nobody" cannot patch '
            f'resource "configmaps" in API group "" in the namespace "{ns}"') in ready["message"]
    assert not _exists(kapi_server, "configmap", "one", "-n", ns)


def test_a_revision_that_prunes_everything_waits_for_an_allow(kapi_server, tmp_path):
    """A commit that leaves only a README would prune every object: the push
    says the Sync will hold it, the Sync reports PruneHeld and deletes nothing;
    the allow annotation naming that commit lets it go ahead."""
    ns, work = _tenant(kapi_server, tmp_path)
    work.write("a.yaml", _cm("a"))
    work.write("b.yaml", _cm("b"))
    work.push("two")
    assert _settled(kapi_server, ns, work)["status"] == "True"

    work.remove("a.yaml")
    work.remove("b.yaml")
    work.write("README.md", "moved elsewhere\n")
    done = work.push("only a readme")
    head = work.git("rev-parse", "HEAD").stdout.strip()
    assert f"Sync {ns}/app: this revision would delete all 2 objects this Sync applied" in done.stderr
    assert f"sync.kapi.dev/allow-prune={head[:12]}" in done.stderr
    ready = _settled(kapi_server, ns, work)
    assert ready["status"] == "False" and ready["reason"] == "PruneHeld", ready
    assert "would delete all 2 objects" in ready["message"]
    assert _exists(kapi_server, "configmap", "a", "-n", ns) and _exists(kapi_server, "configmap", "b", "-n", ns)

    # An allow for another commit changes nothing; the right one applies it.
    kapi_server.kubectl("annotate", "sync", "app", "-n", ns, "sync.kapi.dev/allow-prune=0123456789ab")
    kapi_server.kubectl("annotate", "sync", "app", "-n", ns, "--overwrite",
                        f"sync.kapi.dev/allow-prune={head[:12]}")
    wait_for(lambda: not _exists(kapi_server, "configmap", "a", "-n", ns)
             and not _exists(kapi_server, "configmap", "b", "-n", ns), what="the allowed prune")
    ready = _settled(kapi_server, ns, work)
    assert ready["status"] == "True"
    assert "pruneHeldRevision" not in _sync(kapi_server, ns)["status"]


def test_pruning_a_namespace_is_held(kapi_server, tmp_path):
    """Removing a Namespace from the repository (which would delete all that is
    in it) is held even when other objects stay."""
    ns = unique("nsprune")
    app_ns = unique("appns")
    create(kapi_server, *sync_namespace(ns),
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns}, "spec": {}},
           {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
            "spec": {"sourceRef": {"name": "app"}}})
    work = Work(kapi_server, ns, "app", tmp_path / ns)
    work.write("ns.yaml", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": app_ns}})
    work.write("keep.yaml", _cm("keep"))
    work.push("namespace")
    assert _settled(kapi_server, ns, work)["status"] == "True"
    work.remove("ns.yaml")
    done = work.push("drop the namespace")
    assert f"would delete Namespace {app_ns}" in done.stderr
    ready = _settled(kapi_server, ns, work)
    assert ready["reason"] == "PruneHeld" and f"delete Namespace {app_ns}" in ready["message"]
    assert _exists(kapi_server, "namespace", app_ns)


def test_the_finalizer_prunes_as_the_sync_and_leaves_what_it_may_not_delete(kapi_server, tmp_path):
    """Deleting a Sync prunes its objects with its own identity: once its right
    to delete a Namespace it created is revoked, that Namespace stays (a
    Warning event names it) and the Sync still goes."""
    app_ns = unique("finalns")
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": f"{app_ns}-creator"},
            "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get", "create", "patch", "delete"]}]}
    ns, work = _tenant(kapi_server, tmp_path, role)
    grant = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
             "metadata": {"name": f"{app_ns}-creator"},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": f"{app_ns}-creator"},
             "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": ns}]}
    create(kapi_server, grant)
    work.write("ns.yaml", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": app_ns}})
    work.write("cm.yaml", _cm("local"))
    wait_for(lambda: work.push("namespace", check=False).returncode == 0, what="the grant to take effect")
    assert _settled(kapi_server, ns, work)["status"] == "True"
    assert _exists(kapi_server, "namespace", app_ns)

    kapi_server.kubectl("delete", "clusterrolebinding", f"{app_ns}-creator")
    kapi_server.kubectl("delete", "sync", "app", "-n", ns, "--timeout=30s")
    assert not _exists(kapi_server, "configmap", "local", "-n", ns)
    assert _exists(kapi_server, "namespace", app_ns)
    events = json.loads(kapi_server.kubectl("get", "events", "-n", ns, "-o", "json").stdout)["items"]
    assert any(e["reason"] == "PruneFailed" and f'namespaces "{app_ns}" is forbidden' in e["message"]
               for e in events), [e["message"] for e in events]


def test_a_change_to_a_kustomize_base_outside_the_path_is_applied(kapi_server, tmp_path):
    """spec.path is an overlay that uses ../base: a commit that changes only the
    base is rendered and applied, not recorded as applied unchanged."""
    ns, work = _tenant(kapi_server, tmp_path, sync_spec={"path": "./overlay"})
    work.write("base/kustomization.yaml", "resources: [cm.yaml]\n")
    work.write("base/cm.yaml", _cm("from-base", color="blue"))
    work.write("overlay/kustomization.yaml", "resources: [../base]\nnamePrefix: prod-\n")
    work.push("overlay")
    assert _settled(kapi_server, ns, work)["status"] == "True"

    def color() -> str:
        return kapi_server.kubectl("get", "cm", "prod-from-base", "-n", ns, "-o", "jsonpath={.data.color}").stdout

    assert color() == "blue"
    work.write("base/cm.yaml", _cm("from-base", color="green"))
    work.push("base only")
    assert _settled(kapi_server, ns, work)["status"] == "True"
    assert color() == "green"


def test_force_recreates_an_object_whose_immutable_field_changed(kapi_server, tmp_path):
    """spec.force: an immutable ConfigMap whose data changes is deleted and
    created again (validation knows it will be); without force the Sync fails."""
    ns, work = _tenant(kapi_server, tmp_path)
    frozen = {**_cm("frozen", v="1"), "immutable": True}
    work.write("cm.yaml", frozen)
    work.push("frozen")
    assert _settled(kapi_server, ns, work)["status"] == "True"
    uid = json.loads(kapi_server.kubectl("get", "cm", "frozen", "-n", ns, "-o", "json").stdout)["metadata"]["uid"]

    work.write("cm.yaml", {**frozen, "data": {"v": "2"}})
    refused = work.push("changed", check=False)
    assert refused.returncode != 0 and "immutable" in refused.stderr

    kapi_server.kubectl("patch", "sync", "app", "-n", ns, "--type=merge", "-p", '{"spec":{"force":true}}')
    work.push("changed, forced")
    assert _settled(kapi_server, ns, work)["status"] == "True"
    live = json.loads(kapi_server.kubectl("get", "cm", "frozen", "-n", ns, "-o", "json").stdout)
    assert live["data"] == {"v": "2"} and live["metadata"]["uid"] != uid


def test_the_readme_single_user_grant(kapi_server, tmp_path):
    """The README's one command (a ClusterRoleBinding for the namespace's
    default ServiceAccount) lets a single user's Sync create a Namespace and
    objects in it."""
    ns = unique("single")
    app_ns = unique("site")
    create(kapi_server, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    kapi_server.kubectl("create", "clusterrolebinding", f"kapi-sync-{ns}", "--clusterrole=cluster-admin",
                        f"--serviceaccount={ns}:default")
    create(kapi_server,
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns}, "spec": {}},
           {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
            "spec": {"sourceRef": {"name": "app"}, "path": "./deploy"}})
    work = Work(kapi_server, ns, "app", tmp_path / ns)
    work.write("deploy/ns.yaml", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": app_ns}})
    work.write("deploy/cm.yaml", _cm("page", app_ns))
    work.push("site")
    kapi_server.kubectl("wait", "--for=condition=Ready", "sync/app", "-n", ns, "--timeout=30s")
    assert _exists(kapi_server, "configmap", "page", "-n", app_ns)
