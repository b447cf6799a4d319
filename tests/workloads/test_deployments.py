"""Deployments make ReplicaSets (pod-template-hash, revisions), roll out as
kube's controller does with no Pod ever ready, report status, and their
deletion removes or orphans what they made."""

from __future__ import annotations

import pytest
from kubernetes import client

from tests.workloads.conftest import pod_template, wait_for

MERGE = {"Content-Type": "application/merge-patch+json"}


def _deployment(name: str, replicas: int = 2, **spec) -> dict:
    return {
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": pod_template({"app": name}), **spec},
    }


def _rss(api, namespace: str) -> list[dict]:
    return api.get(f"/apis/apps/v1/namespaces/{namespace}/replicasets").json()["items"]


def _pods(api, namespace: str) -> list[dict]:
    return api.get(f"/api/v1/namespaces/{namespace}/pods").json()["items"]


def test_rollout_revisions_and_status(api, namespace):
    """The first ReplicaSet is <deployment>-<hash> with the hash label on it,
    its template and selector, revision 1 and the replicas annotations; a
    template change makes revision 2, scaled up within maxSurge while the old
    one keeps its Pods (none is ever available); status as kube writes it."""
    base = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    d = api.post(base, _deployment("web", 2)).json()
    rs = wait_for(lambda: (r := _rss(api, namespace)) and r[0], what="a ReplicaSet")
    pod_hash = rs["metadata"]["labels"]["pod-template-hash"]
    assert rs["metadata"]["name"] == f"web-{pod_hash}"
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": pod_hash}
    assert rs["spec"]["template"]["metadata"]["labels"] == {"app": "web", "pod-template-hash": pod_hash}
    assert rs["metadata"]["annotations"] == {
        "deployment.kubernetes.io/revision": "1",
        "deployment.kubernetes.io/desired-replicas": "2",
        "deployment.kubernetes.io/max-replicas": "3",
    }
    assert rs["metadata"]["ownerReferences"][0]["uid"] == d["metadata"]["uid"]

    def progressed():
        got = api.get(f"{base}/web").json()
        return got.get("status", {}).get("updatedReplicas") == 2 and got

    got = wait_for(progressed, what="deployment status")
    assert got["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    status = got["status"]
    assert {k: v for k, v in status.items() if k != "conditions"} == {
        "observedGeneration": 1, "replicas": 2, "updatedReplicas": 2, "unavailableReplicas": 2,
    }
    conds = {c["type"]: c for c in status["conditions"]}
    assert conds["Available"]["status"] == "False"
    assert conds["Available"]["reason"] == "MinimumReplicasUnavailable"
    assert conds["Available"]["message"] == "Deployment does not have minimum availability."
    assert conds["Progressing"]["status"] == "True"
    assert conds["Progressing"]["reason"] == "ReplicaSetUpdated"
    assert conds["Progressing"]["message"] == f'ReplicaSet "web-{pod_hash}" is progressing.'

    r = api.request("PATCH", f"{base}/web", headers=MERGE, json={
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.26"}]}}}})
    assert r.status_code == 200, r.text

    def rolled():
        rss = {r["metadata"]["annotations"]["deployment.kubernetes.io/revision"]: r for r in _rss(api, namespace)}
        if "2" not in rss or rss["2"].get("status", {}).get("replicas") != 1:
            return None
        return rss

    rss = wait_for(rolled, what="revision 2")
    assert rss["1"]["spec"]["replicas"] == 2  # maxUnavailable 0 of 2: none may go
    assert rss["2"]["spec"]["replicas"] == 1  # maxSurge 1 of 2
    wait_for(lambda: len(_pods(api, namespace)) == 3, what="3 pods")

    def rolled_status():
        got = api.get(f"{base}/web").json()
        status = got["status"]
        return status.get("observedGeneration") == 2 and status.get("replicas") == 3 and got

    got = wait_for(rolled_status, what="status of generation 2")
    assert got["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert got["status"]["updatedReplicas"] == 1 and got["status"]["unavailableReplicas"] == 3


@pytest.mark.parametrize("policy", ["Background", "Foreground", "Orphan"])
def test_delete_propagation(api, namespace, policy):
    """Background and Foreground remove the ReplicaSet and its Pods; Orphan
    keeps them, the ReplicaSet without its controller reference."""
    base = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    api.post(base, _deployment("simpletest.deployment", 2))
    wait_for(lambda: len(_pods(api, namespace)) == 2, what="2 pods")
    r = api.delete(f"{base}/simpletest.deployment", json={"propagationPolicy": policy})
    assert r.status_code == 200, r.text
    wait_for(lambda: api.get(f"{base}/simpletest.deployment").status_code == 404, what="deployment gone")
    if policy == "Orphan":
        rss = _rss(api, namespace)
        assert len(rss) == 1 and "ownerReferences" not in rss[0]["metadata"]
        assert len(_pods(api, namespace)) == 2
    else:
        wait_for(lambda: not _rss(api, namespace) and not _pods(api, namespace), what="all collected")


def test_recreate_and_resource_field_ref_divisor(k8s_api_client, namespace):
    """Recreate scales the old ReplicaSet to 0 before the new one gets Pods;
    ``resourceFieldRef.divisor`` defaults to "0" (the Python client)."""
    apps = client.AppsV1Api(k8s_api_client)
    env = client.V1EnvVar(name="LIMIT", value_from=client.V1EnvVarSource(
        resource_field_ref=client.V1ResourceFieldSelector(resource="limits.cpu", container_name="c")))
    body = client.V1Deployment(
        metadata=client.V1ObjectMeta(name="rec"),
        spec=client.V1DeploymentSpec(
            replicas=2, strategy=client.V1DeploymentStrategy(type="Recreate"),
            selector=client.V1LabelSelector(match_labels={"app": "rec"}),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels={"app": "rec"}),
                spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx", env=[env])]))))
    created = apps.create_namespaced_deployment(namespace, body)
    ref = created.spec.template.spec.containers[0].env[0].value_from.resource_field_ref
    assert ref.divisor == "0"

    def replicas():
        status = apps.read_namespaced_deployment_status("rec", namespace).status
        return status is not None and status.replicas == 2

    wait_for(replicas, what="2 replicas")
    apps.patch_namespaced_deployment("rec", namespace, {"spec": {"template": {"spec": {
        "containers": [{"name": "c", "image": "nginx:1.26"}]}}}})

    def recreated():
        rss = apps.list_namespaced_replica_set(namespace).items
        by_rev = {r.metadata.annotations["deployment.kubernetes.io/revision"]: r for r in rss}
        return "2" in by_rev and by_rev["2"].spec.replicas == 2 and by_rev["1"].spec.replicas == 0

    wait_for(recreated, what="old scaled to 0, new to 2")
