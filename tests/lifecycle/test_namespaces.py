"""Namespace termination, the /finalize subresource, the default ServiceAccount."""

from __future__ import annotations

import importlib.util
import threading

from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.api.conftest import assert_status
from tests.lifecycle.conftest import cm, gone, wait_for

HAS_WATCH = importlib.util.find_spec("kapi.api.watch") is not None


def test_default_service_account_appears(api, namespace):
    """Every namespace gets a ServiceAccount ``default``; deleted, it comes back."""
    sa = f"/api/v1/namespaces/{namespace}/serviceaccounts/default"
    wait_for(lambda: api.get(sa).status_code == 200, what="default ServiceAccount")
    for system in ("default", "kube-system", "kube-public"):
        path = f"/api/v1/namespaces/{system}/serviceaccounts/default"
        wait_for(
            lambda path=path: api.get(path).status_code == 200,
            what=f"default ServiceAccount in {system}",
        )
    assert api.delete(sa).status_code == 200
    wait_for(
        lambda: api.get(sa).status_code == 200, what="default ServiceAccount recreated"
    )


def test_protected_namespaces_cannot_be_deleted(api):
    for name in ("default", "kube-system", "kube-public"):
        assert_status(api.delete(f"/api/v1/namespaces/{name}"), 403, "Forbidden")


def test_kubectl_delete_namespace_waits_for_finalizers(
    kapi_server, api, k8s_api_client
):
    """``kubectl delete ns`` of a namespace holding objects (two with finalizers that
    another client removes later): Terminating with kube's conditions, creation
    refused with 403, everything deleted, then the namespace."""
    core = client.CoreV1Api(k8s_api_client)
    ns = "lc-terminate"
    api.post("/api/v1/namespaces", {"metadata": {"name": ns}})
    base = f"/api/v1/namespaces/{ns}/configmaps"
    for i in range(20):
        api.post(base, cm(f"plain{i}"))
    api.post(base, cm("held1", finalizers=["example.com/hold"]))
    api.post(base, cm("held2", finalizers=["example.com/hold", "example.com/other"]))
    api.post(
        f"/api/v1/namespaces/{ns}/secrets",
        {"metadata": {"name": "s"}, "stringData": {"a": "b"}},
    )

    result: dict = {}

    def delete() -> None:
        # Without watch kubectl cannot wait; the test then polls instead.
        wait = ["--wait", "--timeout=90s"] if HAS_WATCH else ["--wait=false"]
        result["out"] = kapi_server.kubectl(
            "delete", "namespace", ns, *wait, check=False
        )

    deleter = threading.Thread(target=delete)
    deleter.start()
    wait_for(
        lambda: (
            "deletionTimestamp"
            in api.get(f"/api/v1/namespaces/{ns}").json()["metadata"]
        ),
        what="namespace terminating",
    )
    got = api.get(f"/api/v1/namespaces/{ns}").json()
    assert got["status"]["phase"] == "Terminating"
    assert got["metadata"]["deletionTimestamp"]
    assert got["spec"]["finalizers"] == ["kubernetes"]

    # Creating anything in it is forbidden, with kube's words.
    status = assert_status(api.post(base, cm("late")), 403, "Forbidden")
    assert status["message"] == (
        f'configmaps "late" is forbidden: unable to create new content in namespace {ns} '
        "because it is being terminated"
    )
    assert status["details"]["causes"][0]["reason"] == "NamespaceTerminating"
    # Admission comes before validation, and a dry run is refused alike.
    assert_status(api.post(base, cm("Bad_Name")), 403, "Forbidden")
    assert_status(api.post(base + "?dryRun=All", cm("late3")), 403, "Forbidden")
    try:
        core.create_namespaced_config_map(
            ns, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="late2"))
        )
        raise AssertionError("created in a terminating namespace")
    except ApiException as exc:
        assert exc.status == 403

    def only_held_left():
        names = sorted(i["metadata"]["name"] for i in api.get(base).json()["items"])
        secrets = api.get(f"/api/v1/namespaces/{ns}/secrets").json()["items"]
        return names == ["held1", "held2"] and not secrets

    wait_for(only_held_left, what="plain content deleted")

    def conditions():
        conds = {
            c["type"]: c
            for c in api.get(f"/api/v1/namespaces/{ns}")
            .json()["status"]
            .get("conditions", [])
        }
        settled = (
            conds.get("NamespaceContentRemaining", {})
            .get("message", "")
            .endswith(": configmaps. has 2 resource instances")
        )
        return conds if settled else None

    conds = wait_for(conditions, what="namespace conditions")
    assert conds["NamespaceContentRemaining"]["status"] == "True"
    assert conds["NamespaceContentRemaining"]["reason"] == "SomeResourcesRemain"
    assert conds["NamespaceContentRemaining"]["message"] == (
        "Some resources are remaining: configmaps. has 2 resource instances"
    )
    assert conds["NamespaceFinalizersRemaining"]["message"] == (
        "Some content in the namespace has finalizers remaining: example.com/hold in 2 resource "
        "instances, example.com/other in 1 resource instances"
    )
    assert conds["NamespaceDeletionContentFailure"]["status"] == "False"
    assert conds["NamespaceDeletionDiscoveryFailure"]["reason"] == "ResourcesDiscovered"
    for c in conds.values():
        assert c["lastTransitionTime"]
    # The conditions are written as kube's controllers write them.
    entries = (
        api.get(f"/api/v1/namespaces/{ns}").json()["metadata"].get("managedFields", [])
    )
    assert {"manager": "kube-controller-manager", "subresource": "status"} in [
        {"manager": e["manager"], "subresource": e.get("subresource")} for e in entries
    ], entries

    # Another client releases the finalizers; kubectl --wait sees the namespace go.
    def release() -> None:
        for name in ("held1", "held2"):
            obj = api.get(f"{base}/{name}").json()
            obj["metadata"]["finalizers"] = []
            api.put(f"{base}/{name}", obj)

    thread = threading.Thread(target=release)
    thread.start()
    thread.join(30)
    deleter.join(120)
    assert result["out"].returncode == 0, result["out"].stderr
    assert 'namespace "lc-terminate" deleted' in result["out"].stdout
    wait_for(
        lambda: gone(api, f"/api/v1/namespaces/{ns}"), timeout=60, what="namespace gone"
    )


def test_finalize_subresource(api):
    """PUT /finalize changes spec.finalizers only; emptying it on a terminating
    namespace removes it."""
    ns = "lc-finalize"
    api.post("/api/v1/namespaces", {"metadata": {"name": ns}})
    api.post(
        f"/api/v1/namespaces/{ns}/configmaps",
        cm("held", finalizers=["example.com/hold"]),
    )
    obj = api.get(f"/api/v1/namespaces/{ns}").json()
    obj["spec"]["finalizers"] = ["kubernetes", "example.com/ns"]
    obj["status"] = {"phase": "Terminating"}
    r = api.put(f"/api/v1/namespaces/{ns}/finalize", obj)
    assert r.status_code == 200, r.text
    assert r.json()["spec"]["finalizers"] == ["kubernetes", "example.com/ns"]
    assert r.json()["status"]["phase"] == "Active"
    # A plain update cannot change spec.finalizers.
    plain = r.json()
    plain["spec"]["finalizers"] = []
    assert api.put(f"/api/v1/namespaces/{ns}", plain).json()["spec"]["finalizers"] == [
        "kubernetes",
        "example.com/ns",
    ]
    api.delete(f"/api/v1/namespaces/{ns}")
    # Emptying spec.finalizers through /finalize lets the namespace go at once
    # (its content is not waited for: kube's "force" escape hatch).
    # The namespace controller writes conditions meanwhile: read again on 409,
    # as any client of an optimistic-concurrency API does.
    for _ in range(20):
        obj = api.get(f"/api/v1/namespaces/{ns}").json()
        assert obj["status"]["phase"] == "Terminating"
        obj["spec"]["finalizers"] = []
        r = api.put(f"/api/v1/namespaces/{ns}/finalize", obj)
        if r.status_code != 409:
            break
    assert r.status_code == 200, r.text
    assert gone(api, f"/api/v1/namespaces/{ns}")
