"""ResourceQuota: the controller's status, scopes, admission, and the status
subresource, against a running server over HTTP (kube's ResourceQuota
behaviour: ``pkg/controller/resourcequota`` and the quota admission plugin)."""

from __future__ import annotations

import concurrent.futures

from tests.quota.conftest import quota, used_of, wait_used

EVERYTHING = {
    "pods": "5", "services": "10", "services.nodeports": "1", "services.loadbalancers": "1",
    "resourcequotas": "1", "cpu": "1", "memory": "500Mi", "configmaps": "10", "secrets": "10",
    "replicationcontrollers": "10", "persistentvolumeclaims": "10", "requests.storage": "10Gi",
    "gold.storageclass.storage.k8s.io/persistentvolumeclaims": "10",
    "count/replicasets.apps": "1", "count/jobs.batch": "3", "requests.example.com/dongle": "3",
    "ephemeral-storage": "50Gi",
}


def _pod(name: str, requests: dict | None = None, limits: dict | None = None, **spec) -> dict:
    resources = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "x", "resources": resources}], **spec}}


def _rs(name: str) -> dict:
    labels = {"rs": name}
    return {
        "metadata": {"name": name},
        "spec": {"replicas": 0, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "x"}]}}},
    }


def _svc(name: str, kind: str) -> dict:
    return {"metadata": {"name": name}, "spec": {"type": kind, "ports": [{"port": 80}]}}


def test_status_counts_every_resource_and_releases_on_delete(api, namespace) -> None:
    """status.hard mirrors spec.hard; used counts pods (with their requests,
    extended resources included), services by type, PVCs by storage class,
    configmaps, secrets, RCs, count/<resource>.<group>; deleting frees it."""
    from tests.lifecycle.conftest import wait_for

    ns = f"/api/v1/namespaces/{namespace}"
    # The namespace's kube-root-ca.crt counts as one of its ConfigMaps.
    wait_for(lambda: api.get(f"{ns}/configmaps/kube-root-ca.crt").status_code == 200, what="kube-root-ca.crt")
    assert api.post(f"{ns}/resourcequotas", quota("q", EVERYTHING)).status_code == 201
    wait_used(api, namespace, "q", {"resourcequotas": "1", "pods": "0", "cpu": "0", "configmaps": "1"})
    assert api.get(f"{ns}/resourcequotas/q").json()["status"]["hard"] == EVERYTHING

    requests = {"cpu": "500m", "memory": "252Mi", "ephemeral-storage": "30Gi", "example.com/dongle": "2"}
    assert api.post(f"{ns}/pods", _pod("p", requests, {"example.com/dongle": "2"})).status_code == 201
    assert api.post(f"{ns}/services", _svc("np", "NodePort")).status_code == 201
    assert api.post(f"{ns}/services", _svc("ip", "ClusterIP")).status_code == 201
    claim = {"metadata": {"name": "c"}, "spec": {"storageClassName": "gold", "accessModes": ["ReadWriteOnce"],
                                                 "resources": {"requests": {"storage": "1Gi"}}}}
    assert api.post(f"{ns}/persistentvolumeclaims", claim).status_code == 201
    assert api.post(f"{ns}/configmaps", {"metadata": {"name": "cm"}}).status_code == 201
    assert api.post(f"{ns}/secrets", {"metadata": {"name": "s"}}).status_code == 201
    assert api.post(f"/apis/apps/v1/namespaces/{namespace}/replicasets", _rs("rs")).status_code == 201
    wait_used(api, namespace, "q", {
        "pods": "1", "cpu": "500m", "memory": "252Mi", "ephemeral-storage": "30Gi",
        "requests.example.com/dongle": "2", "services": "2", "services.nodeports": "1",
        "services.loadbalancers": "0", "persistentvolumeclaims": "1", "requests.storage": "1Gi",
        "gold.storageclass.storage.k8s.io/persistentvolumeclaims": "1", "configmaps": "2",
        "secrets": "1", "count/replicasets.apps": "1", "count/jobs.batch": "0", "replicationcontrollers": "0",
    })

    for path in ("pods/p", "services/np", "services/ip", "persistentvolumeclaims/c", "configmaps/cm", "secrets/s"):
        assert api.delete(f"{ns}/{path}").status_code in (200, 202)
    assert api.delete(f"/apis/apps/v1/namespaces/{namespace}/replicasets/rs").status_code == 200
    wait_used(api, namespace, "q", {
        "pods": "0", "cpu": "0", "memory": "0", "services": "0", "services.nodeports": "0",
        "persistentvolumeclaims": "0", "requests.storage": "0", "configmaps": "1", "secrets": "0",
        "count/replicasets.apps": "0", "requests.example.com/dongle": "0",
    })


def test_admission_refuses_past_the_quota_with_kube_text(api, namespace) -> None:
    """A create past a quota is 403 with kube's "exceeded quota" text; a pod
    that does not set what the quota limits is "failed quota: must specify";
    a dry run is checked but charges nothing; a service turning NodePort on
    update is charged by the difference."""
    ns = f"/api/v1/namespaces/{namespace}"
    hard = {"count/replicasets.apps": "1", "cpu": "1", "memory": "500Mi", "services.nodeports": "1", "services": "5"}
    assert api.post(f"{ns}/resourcequotas", quota("test-quota", hard)).status_code == 201
    wait_used(api, namespace, "test-quota", {"count/replicasets.apps": "0"})
    rs = f"/apis/apps/v1/namespaces/{namespace}/replicasets"
    assert api.post(rs, _rs("a"), params={"dryRun": "All"}).status_code == 201
    assert used_of(api, namespace, "test-quota")["count/replicasets.apps"] == "0"
    assert api.post(rs, _rs("a")).status_code == 201
    refused = api.post(rs, _rs("b"))
    assert refused.status_code == 403, refused.text
    assert refused.json()["reason"] == "Forbidden"
    assert refused.json()["message"] == (
        'replicasets.apps "b" is forbidden: exceeded quota: test-quota, requested: count/replicasets.apps=1, '
        "used: count/replicasets.apps=1, limited: count/replicasets.apps=1"
    )

    bare = api.post(f"{ns}/pods", _pod("bare"))
    assert bare.status_code == 403
    assert bare.json()["message"] == 'pods "bare" is forbidden: failed quota: test-quota: must specify cpu,memory'
    assert api.post(f"{ns}/pods", _pod("fits", {"cpu": "600m", "memory": "100Mi"})).status_code == 201
    over = api.post(f"{ns}/pods", _pod("over", {"cpu": "500m", "memory": "100Mi"}))
    assert over.status_code == 403
    assert over.json()["message"] == (
        'pods "over" is forbidden: exceeded quota: test-quota, requested: cpu=500m, used: cpu=600m, limited: cpu=1'
    )

    assert api.post(f"{ns}/services", _svc("s1", "ClusterIP")).status_code == 201
    assert api.post(f"{ns}/services", _svc("s2", "NodePort")).status_code == 201
    current = api.get(f"{ns}/services/s1").json()
    current["spec"]["type"] = "NodePort"
    changed = api.put(f"{ns}/services/s1", current)
    assert changed.status_code == 403, changed.text
    assert "exceeded quota: test-quota, requested: services.nodeports=1" in changed.json()["message"]


def test_scopes_and_priority_class(api, namespace) -> None:
    """Terminating/NotTerminating, BestEffort/NotBestEffort and PriorityClass
    (In, NotIn, Exists) quotas count only the pods in their scopes; a pod
    that Succeeded stops counting."""
    ns = f"/api/v1/namespaces/{namespace}"
    quotas = {
        "term": quota("term", {"pods": "5"}, scopes=["Terminating"]),
        "not-term": quota("not-term", {"pods": "5"}, scopes=["NotTerminating"]),
        "be": quota("be", {"pods": "5"}, scopes=["BestEffort"]),
        "not-be": quota("not-be", {"pods": "5"}, scopes=["NotBestEffort"]),
        "gold": quota("gold", {"pods": "5"}, scopeSelector={"matchExpressions": [
            {"scopeName": "PriorityClass", "operator": "In", "values": ["gold"]}]}),
        "not-gold": quota("not-gold", {"pods": "5"}, scopeSelector={"matchExpressions": [
            {"scopeName": "PriorityClass", "operator": "NotIn", "values": ["gold"]}]}),
        "any-class": quota("any-class", {"pods": "5"}, scopeSelector={"matchExpressions": [
            {"scopeName": "PriorityClass", "operator": "Exists"}]}),
    }
    for body in quotas.values():
        assert api.post(f"{ns}/resourcequotas", body).status_code == 201
    for name in quotas:
        wait_used(api, namespace, name, {"pods": "0"})
    assert api.post(f"{ns}/pods", _pod("plain")).status_code == 201
    assert api.post(f"{ns}/pods", _pod("deadline", {"cpu": "1"}, activeDeadlineSeconds=60)).status_code == 201
    expected = {"term": "1", "not-term": "1", "be": "1", "not-be": "1", "gold": "0", "not-gold": "2", "any-class": "0"}
    for name, count in expected.items():
        wait_used(api, namespace, name, {"pods": count})

    done = api.get(f"{ns}/pods/plain").json()
    done["status"] = {"phase": "Succeeded"}
    assert api.put(f"{ns}/pods/plain/status", done).status_code == 200
    wait_used(api, namespace, "be", {"pods": "0"})
    wait_used(api, namespace, "not-term", {"pods": "0"})


def test_spec_change_recomputes_and_status_patch_is_reset(api, namespace) -> None:
    """Raising spec.hard updates status.hard at once (and admission with it);
    a patch of /status is answered as written, and the controller puts
    status.hard back to spec.hard."""
    ns = f"/api/v1/namespaces/{namespace}"
    assert api.post(f"{ns}/resourcequotas", quota("q", {"secrets": "1"})).status_code == 201
    wait_used(api, namespace, "q", {"secrets": "0"})
    assert api.post(f"{ns}/secrets", {"metadata": {"name": "a"}}).status_code == 201
    assert api.post(f"{ns}/secrets", {"metadata": {"name": "b"}}).status_code == 403
    merge = {"Content-Type": "application/merge-patch+json"}
    assert api.request("PATCH", f"{ns}/resourcequotas/q", json={"spec": {"hard": {"secrets": "2"}}},
                       headers=merge).status_code == 200
    from tests.lifecycle.conftest import wait_for

    wait_for(lambda: api.get(f"{ns}/resourcequotas/q").json()["status"]["hard"] == {"secrets": "2"},
             what="status.hard follows spec.hard")
    assert api.post(f"{ns}/secrets", {"metadata": {"name": "b"}}).status_code == 201

    patched = api.request("PATCH", f"{ns}/resourcequotas/q/status",
                          json={"status": {"hard": {"secrets": "9"}}}, headers=merge)
    assert patched.status_code == 200
    assert patched.json()["status"]["hard"] == {"secrets": "9"}
    assert patched.json()["spec"]["hard"] == {"secrets": "2"}
    wait_for(lambda: api.get(f"{ns}/resourcequotas/q").json()["status"]["hard"] == {"secrets": "2"},
             what="status.hard reset to spec.hard")


def test_tenant_cannot_raise_quota_through_status(api, namespace, user_token, kapi_server) -> None:
    """A user who may create pods and read quotas but not write
    resourcequotas/status is refused (403) a patch of the status."""
    import requests

    ns = f"/api/v1/namespaces/{namespace}"
    assert api.post(f"{ns}/resourcequotas", quota("q", {"pods": "1"})).status_code == 201
    role = {"metadata": {"name": "tenant"}, "rules": [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["create", "get", "list"]},
        {"apiGroups": [""], "resources": ["resourcequotas"], "verbs": ["get", "list", "watch"]}]}
    user = f"tenant-{namespace}"
    rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}"
    assert api.post(f"{rbac}/roles", role).status_code == 201
    binding = {"metadata": {"name": "tenant"}, "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
               "name": "tenant"}, "subjects": [{"kind": "User", "name": user, "apiGroup": "rbac.authorization.k8s.io"}]}
    assert api.post(f"{rbac}/rolebindings", binding).status_code == 201
    tenant = requests.Session()
    tenant.trust_env = False
    tenant.verify = str(kapi_server.ca_path)
    tenant.headers["Authorization"] = f"Bearer {user_token(user)}"
    from tests.lifecycle.conftest import wait_for

    wait_for(lambda: tenant.get(kapi_server.url + f"{ns}/resourcequotas/q", timeout=30).status_code == 200,
             what="the tenant's role applies")
    for sub in ("/status", ""):
        refused = tenant.patch(kapi_server.url + f"{ns}/resourcequotas/q{sub}", timeout=30,
                               json={"spec": {"hard": {"pods": "100"}}, "status": {"hard": {"pods": "100"}}},
                               headers={"Content-Type": "application/merge-patch+json"})
        assert refused.status_code == 403, refused.text
    assert api.get(f"{ns}/resourcequotas/q").json()["spec"]["hard"] == {"pods": "1"}


def test_concurrent_creates_do_not_overshoot(api, namespace) -> None:
    """Twelve creates racing for three slots: exactly three pass, the rest
    are refused with kube's text, and used says three."""
    ns = f"/api/v1/namespaces/{namespace}"
    assert api.post(f"{ns}/resourcequotas", quota("q", {"secrets": "3"})).status_code == 201
    wait_used(api, namespace, "q", {"secrets": "0"})

    def create(i: int) -> int:
        return api.post(f"{ns}/secrets", {"metadata": {"name": f"c{i}"}}).status_code

    with concurrent.futures.ThreadPoolExecutor(12) as pool:
        codes = list(pool.map(create, range(12)))
    assert sorted(codes) == [201] * 3 + [403] * 9, codes
    listed = api.get(f"{ns}/secrets").json()["items"]
    assert len([c for c in listed if c["metadata"]["name"].startswith("c")]) == 3
    wait_used(api, namespace, "q", {"secrets": "3"})


def test_root_ca_configmap_refused_by_a_quota_is_published_once_it_fits(api, namespace) -> None:
    """The root-CA publisher does not give up on a ConfigMap a quota refuses:
    once the quota is raised, kube-root-ca.crt is back (kube's requeue)."""
    from tests.lifecycle.conftest import wait_for

    ns = f"/api/v1/namespaces/{namespace}"
    wait_for(lambda: api.get(f"{ns}/configmaps/kube-root-ca.crt").status_code == 200, what="kube-root-ca.crt")
    assert api.post(f"{ns}/resourcequotas", quota("q", {"configmaps": "0"})).status_code == 201
    wait_used(api, namespace, "q", {"configmaps": "1"})
    assert api.delete(f"{ns}/configmaps/kube-root-ca.crt").status_code == 200
    refused = api.post(f"{ns}/configmaps", {"metadata": {"name": "x"}})
    assert refused.status_code == 403, refused.text
    merge = {"Content-Type": "application/merge-patch+json"}
    assert api.request("PATCH", f"{ns}/resourcequotas/q", json={"spec": {"hard": {"configmaps": "5"}}},
                       headers=merge).status_code == 200
    wait_for(lambda: api.get(f"{ns}/configmaps/kube-root-ca.crt").status_code == 200, timeout=30,
             what="kube-root-ca.crt published again")
