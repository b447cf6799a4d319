"""spec.postBuild: Flux's variable substitution from the Sync, a ConfigMap and
a Secret (read with the Sync's identity), defaults, escapes, the opt-out, and
an unset variable refused at push time by name."""

from __future__ import annotations

import base64
import json

from sync_gitops import Work, create, sync_namespace, unique, wait_for

API = "sync.kapi.dev/v1"


def _get(server, *args: str) -> dict | None:
    done = server.kubectl("get", *args, "-o", "json", check=False)
    return json.loads(done.stdout) if done.returncode == 0 else None


def test_variables_from_the_sync_a_configmap_and_a_secret(kapi_server, tmp_path):
    ns = unique("postbuild")
    post = {"substitute": {"region": "eu-1"},
            "substituteFrom": [{"kind": "ConfigMap", "name": "vars"}, {"kind": "Secret", "name": "creds"},
                               {"kind": "ConfigMap", "name": "absent", "optional": True}]}
    create(kapi_server, *sync_namespace(ns),
           {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "vars", "namespace": ns},
            "data": {"replicas": "3", "region": "overridden-by-substitute"}},
           {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds", "namespace": ns},
            "data": {"password": base64.b64encode(b"s3cret").decode()}},
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns}, "spec": {}},
           {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
            "spec": {"sourceRef": {"name": "app"}, "postBuild": post}})
    work = Work(kapi_server, ns, "app", tmp_path / ns)
    work.write("app.yaml", "\n".join([
        "apiVersion: apps/v1", "kind: Deployment", "metadata: {name: web}",
        "spec:", "  replicas: ${replicas}", "  selector: {matchLabels: {app: web}}",
        "  template:", "    metadata: {labels: {app: web}}",
        "    spec: {containers: [{name: c, image: 'nginx:${tag:=1.25}'}]}",
    ]))
    work.write("cm.yaml", "\n".join([
        "apiVersion: v1", "kind: ConfigMap", "metadata: {name: settings}", "data:",
        "  region: ${region}", "  password: ${password}", "  literal: $${region}",
    ]))
    work.write("raw.yaml", "\n".join([
        "apiVersion: v1", "kind: ConfigMap", "metadata:", "  name: raw",
        "  annotations: {kustomize.toolkit.fluxcd.io/substitute: disabled}", "data: {x: '${untouched}'}",
    ]))
    work.push("templated")
    head = work.git("rev-parse", "HEAD").stdout.strip()
    wait_for(lambda: (_get(kapi_server, "sync", "app", "-n", ns) or {}).get("status", {})
             .get("lastAppliedRevision", "").endswith(head), what="the revision to be applied")
    web = _get(kapi_server, "deployment", "web", "-n", ns)
    assert web["spec"]["replicas"] == 3
    assert web["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"
    assert _get(kapi_server, "cm", "settings", "-n", ns)["data"] == {
        "region": "eu-1", "password": "s3cret", "literal": "${region}"}
    assert _get(kapi_server, "cm", "raw", "-n", ns)["data"] == {"x": "${untouched}"}

    # A variable set nowhere is refused at push time, by name.
    work.write("more.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: more}\ndata: {a: '${nowhere}'}\n")
    done = work.push("unset variable", check=False)
    assert done.returncode != 0
    assert f"Sync {ns}/app: ConfigMap more: variable not set: nowhere" in done.stderr
    assert "s3cret" not in done.stderr


def test_a_secret_the_service_account_may_not_read_is_not_read(kapi_server, tmp_path):
    """substituteFrom is read as the Sync's ServiceAccount: one bound to edit
    ConfigMaps only cannot pull a Secret's values into a ConfigMap."""
    ns = unique("pbrbac")
    create(kapi_server,
           {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
           {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "cms", "namespace": ns},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["*"]}]},
           {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "cms", "namespace": ns},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cms"},
            "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": ns}]},
           {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "admin-creds", "namespace": ns},
            "data": {"token": base64.b64encode(b"root-token").decode()}},
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns}, "spec": {}},
           {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
            "spec": {"sourceRef": {"name": "app"},
                     "postBuild": {"substituteFrom": [{"kind": "Secret", "name": "admin-creds"}]}}})
    work = Work(kapi_server, ns, "app", tmp_path / ns)
    work.write("leak.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: leak}\ndata: {t: '${token}'}\n")
    done = work.push("leak", check=False)
    assert done.returncode != 0
    assert (f'substituteFrom Secret/admin-creds: secrets "admin-creds" is forbidden: '
            f'User "system:serviceaccount:{ns}:default" cannot get resource "secrets"') in done.stderr
    assert "root-token" not in done.stderr
    assert _get(kapi_server, "cm", "leak", "-n", ns) is None
