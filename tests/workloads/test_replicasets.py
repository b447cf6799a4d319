"""ReplicaSets and ReplicationControllers make Pending Pods from their
template, scale, adopt and release Pods by labels, and report status."""

from __future__ import annotations

from tests.workloads.conftest import pod_template, wait_for


def _pods(api, namespace: str, selector: str = "") -> list[dict]:
    params = {"labelSelector": selector} if selector else {}
    return api.get(f"/api/v1/namespaces/{namespace}/pods", params=params).json()["items"]


def _controlled_by(pods: list[dict], uid: str) -> list[dict]:
    return [
        p for p in pods
        if any(r["uid"] == uid and r.get("controller") for r in p["metadata"].get("ownerReferences", []))
    ]


def test_replicaset_creates_scales_adopts_and_releases(api, namespace):
    """Pods named <rs>-<5 chars>, Pending, with the template's labels and a
    blocking controller reference; status as kube writes it; scaling down
    deletes, an orphan with matching labels is adopted (and counted), a Pod
    relabelled out of the selector is released and replaced."""
    base = f"/apis/apps/v1/namespaces/{namespace}/replicasets"
    rs = api.post(base, {
        "metadata": {"name": "front"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "front"}},
                 "template": pod_template({"app": "front", "tier": "web"})},
    }).json()
    uid = rs["metadata"]["uid"]
    pods = wait_for(lambda: len(p := _controlled_by(_pods(api, namespace), uid)) == 3 and p, what="3 pods")
    for pod in pods:
        meta = pod["metadata"]
        assert meta["name"].startswith("front-") and len(meta["name"]) == len("front-") + 5
        assert meta["labels"] == {"app": "front", "tier": "web"}
        assert meta["ownerReferences"] == [{
            "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "front", "uid": uid,
            "controller": True, "blockOwnerDeletion": True,
        }]
        assert pod["status"]["phase"] == "Pending"
    status = wait_for(
        lambda: (s := api.get(f"{base}/front").json().get("status", {})).get("observedGeneration") == 1 and s,
        what="status",
    )
    assert status == {"replicas": 3, "fullyLabeledReplicas": 3, "observedGeneration": 1}

    r = api.request("PATCH", f"{base}/front", json={"spec": {"replicas": 1}},
                    headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text
    wait_for(lambda: len(_controlled_by(_pods(api, namespace), uid)) == 1, what="scaled down to 1")

    orphan = api.post(f"/api/v1/namespaces/{namespace}/pods", {
        "metadata": {"name": "stray", "labels": {"app": "front"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]},
    }).json()
    assert orphan["metadata"]["name"] == "stray"
    # Adopted; with 2 Pods now one too many, one of the two goes (the newest: the stray).
    wait_for(lambda: len(_pods(api, namespace, "app=front")) == 1
             and len(_controlled_by(_pods(api, namespace), uid)) == 1, what="stray adopted, then deleted")

    kept = _controlled_by(_pods(api, namespace), uid)[0]
    r = api.request("PATCH", f"/api/v1/namespaces/{namespace}/pods/{kept['metadata']['name']}",
                    json={"metadata": {"labels": {"app": "elsewhere"}}},
                    headers={"Content-Type": "application/merge-patch+json"})
    assert r.status_code == 200, r.text

    def released_and_replaced():
        released = api.get(f"/api/v1/namespaces/{namespace}/pods/{kept['metadata']['name']}").json()
        return (
            "ownerReferences" not in released["metadata"]
            and len(_controlled_by(_pods(api, namespace, "app=front"), uid)) == 1
        )

    wait_for(released_and_replaced, what="pod released and replaced")


def test_replication_controller_pods_go_with_it(kapi_server, api, namespace):
    """An RC (the conformance test's shape) creates its Pods; deleting it in
    the background removes them."""
    base = f"/api/v1/namespaces/{namespace}/replicationcontrollers"
    rc = api.post(base, {
        "metadata": {"name": "simpletest.rc"},
        "spec": {"replicas": 2, "selector": {"gctest": "rc"},
                 "template": pod_template({"gctest": "rc"})},
    }).json()
    uid = rc["metadata"]["uid"]
    pods = wait_for(lambda: len(p := _controlled_by(_pods(api, namespace), uid)) == 2 and p, what="2 pods")
    assert all(p["metadata"]["ownerReferences"][0]["kind"] == "ReplicationController" for p in pods)
    wait_for(lambda: api.get(f"{base}/simpletest.rc").json().get("status", {}).get("replicas") == 2,
             what="rc status")
    out = kapi_server.kubectl("delete", "rc", "simpletest.rc", "-n", namespace, "--cascade=background")
    assert "deleted" in out.stdout
    wait_for(lambda: not _pods(api, namespace), what="pods collected")


def test_replication_controller_delete_orphans_by_default(api, namespace):
    """core/v1 ReplicationControllers orphan their Pods when a delete names no
    propagation policy (kube's default GC policy for them)."""
    base = f"/api/v1/namespaces/{namespace}/replicationcontrollers"
    rc = api.post(base, {
        "metadata": {"name": "kept"},
        "spec": {"replicas": 2, "selector": {"gc": "kept"}, "template": pod_template({"gc": "kept"})},
    }).json()
    wait_for(lambda: len(_controlled_by(_pods(api, namespace), rc["metadata"]["uid"])) == 2, what="2 pods")
    r = api.delete(f"{base}/kept", json={"preconditions": {"uid": rc["metadata"]["uid"]}})
    assert r.status_code == 200, r.text
    wait_for(lambda: api.get(f"{base}/kept").status_code == 404, what="rc gone")
    pods = _pods(api, namespace, "gc=kept")
    assert len(pods) == 2 and not any("ownerReferences" in p["metadata"] for p in pods)
