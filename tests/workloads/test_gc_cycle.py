"""The garbage collector is not blocked by an ownership cycle (the
conformance test "should not be blocked by dependency circle"), nor is the
deletion of a namespace holding one."""

from __future__ import annotations

from tests.workloads.conftest import container, wait_for

STRATEGIC = {"Content-Type": "application/strategic-merge-patch+json"}


def _cycle(api, namespace: str) -> list[dict]:
    """pod1 owned by pod3, pod2 by pod1, pod3 by pod2, every reference
    controlling and blocking its owner's deletion."""
    base = f"/api/v1/namespaces/{namespace}/pods"
    pods = [
        api.post(base, {"metadata": {"name": f"pod{i}"},
                        "spec": {"terminationGracePeriodSeconds": 0, "containers": [container()]}}).json()
        for i in (1, 2, 3)
    ]
    for pod, owner in zip(pods, [pods[2], pods[0], pods[1]], strict=True):
        ref = {"apiVersion": "v1", "kind": "Pod", "name": owner["metadata"]["name"],
               "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
        r = api.request("PATCH", f"{base}/{pod['metadata']['name']}", headers=STRATEGIC,
                        json={"metadata": {"ownerReferences": [ref]}})
        assert r.status_code == 200, r.text
    return pods


def test_foreground_deletion_of_a_cycle_ends(api, namespace):
    """Deleting pod1 in the foreground (with its uid as precondition) deletes
    all three Pods."""
    pods = _cycle(api, namespace)
    r = api.delete(f"/api/v1/namespaces/{namespace}/pods/pod1", json={
        "propagationPolicy": "Foreground", "preconditions": {"uid": pods[0]["metadata"]["uid"]}})
    assert r.status_code == 200, r.text
    wait_for(lambda: not api.get(f"/api/v1/namespaces/{namespace}/pods").json()["items"],
             what="the three pods deleted")


def test_namespace_with_a_stuck_cycle_goes(api):
    """A namespace whose cycle is being deleted in the foreground, and one
    holding an untouched cycle, are both deleted."""
    names = []
    for n in ("wl-cycle-fg", "wl-cycle-plain"):
        api.delete(f"/api/v1/namespaces/{n}")
        wait_for(lambda n=n: api.get(f"/api/v1/namespaces/{n}").status_code == 404, what=f"{n} free")
        assert api.post("/api/v1/namespaces", {"metadata": {"name": n}}).status_code == 201
        _cycle(api, n)
        names.append(n)
    r = api.delete("/api/v1/namespaces/wl-cycle-fg/pods/pod2", json={"propagationPolicy": "Foreground"})
    assert r.status_code == 200, r.text
    for n in names:
        assert api.delete(f"/api/v1/namespaces/{n}").status_code == 200
    wait_for(lambda: all(api.get(f"/api/v1/namespaces/{n}").status_code == 404 for n in names),
             timeout=60, what="namespaces deleted")
