"""Services with a selector get kube's EndpointSlice and Endpoints; a Pod
with an IP becomes an endpoint, ready per its Ready condition."""

from __future__ import annotations

from tests.workloads.conftest import container, wait_for

MERGE = {"Content-Type": "application/merge-patch+json"}


def test_endpoint_slice_and_endpoints(api, namespace):
    """A placeholder slice (IPv4, no endpoints) owned by the Service with
    kube's labels, an empty Endpoints; then the Pod's IP in both; a Service
    without selector gets neither."""
    api.post(f"/api/v1/namespaces/{namespace}/services", {
        "metadata": {"name": "plain"}, "spec": {"ports": [{"port": 80}]}})
    svc = api.post(f"/api/v1/namespaces/{namespace}/services", {
        "metadata": {"name": "web", "labels": {"team": "a"}},
        "spec": {"selector": {"app": "web"}, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]},
    }).json()
    slices = f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices"
    found = wait_for(lambda: api.get(slices).json()["items"], what="a slice")
    assert len(found) == 1
    s = found[0]
    assert s["addressType"] == "IPv4" and not s.get("endpoints") and not s.get("ports")
    assert s["metadata"]["name"].startswith("web-")
    assert s["metadata"]["labels"] == {
        "team": "a", "kubernetes.io/service-name": "web",
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
    }
    assert s["metadata"]["ownerReferences"] == [{
        "apiVersion": "v1", "kind": "Service", "name": "web", "uid": svc["metadata"]["uid"],
        "controller": True, "blockOwnerDeletion": True}]
    eps = wait_for(lambda: (r := api.get(f"/api/v1/namespaces/{namespace}/endpoints/web")).status_code == 200
                   and r.json(), what="endpoints")
    assert not eps.get("subsets")
    assert api.get(f"/api/v1/namespaces/{namespace}/endpoints/plain").status_code == 404

    pod = f"/api/v1/namespaces/{namespace}/pods/p1"
    api.post(f"/api/v1/namespaces/{namespace}/pods", {
        "metadata": {"name": "p1", "labels": {"app": "web"}}, "spec": {"containers": [container()]}})
    r = api.request("PATCH", f"{pod}/status", headers=MERGE, json={"status": {
        "podIP": "10.1.2.3", "podIPs": [{"ip": "10.1.2.3"}], "conditions": [{"type": "Ready", "status": "True"}]}})
    assert r.status_code == 200, r.text

    def addressed():
        items = api.get(slices).json()["items"]
        return items and items[0].get("endpoints") and items[0]

    s = wait_for(addressed, what="endpoint in the slice")
    assert s["ports"] == [{"name": "http", "protocol": "TCP", "port": 8080}]
    (ep,) = s["endpoints"]
    assert ep["addresses"] == ["10.1.2.3"]
    assert ep["conditions"] == {"ready": True, "serving": True, "terminating": False}
    assert ep["targetRef"]["name"] == "p1"
    subsets = wait_for(lambda: api.get(f"/api/v1/namespaces/{namespace}/endpoints/web").json().get("subsets"),
                       what="endpoints subsets")
    assert subsets[0]["addresses"][0]["ip"] == "10.1.2.3"
    assert subsets[0]["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
