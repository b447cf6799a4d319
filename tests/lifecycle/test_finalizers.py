"""Graceful deletion, finalizers and DeleteOptions, over raw HTTP and the Python client."""

from __future__ import annotations

import importlib.util
import threading

from kubernetes import client, watch

from tests.api.conftest import assert_status
from tests.lifecycle.conftest import cm, gone, wait_for

HAS_WATCH = importlib.util.find_spec("kapi.api.watch") is not None


def test_finalizer_lifecycle_with_watch(api, k8s_api_client, namespace):
    """DELETE of an object with finalizers sets deletionTimestamp (MODIFIED); it stays
    readable; no finalizer may be added; the write that empties finalizers removes it
    (DELETED)."""
    core = client.CoreV1Api(k8s_api_client)
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    created = api.post(base, cm("fin", finalizers=["example.com/hold"])).json()
    seen: list[tuple[str, dict]] = []
    done = threading.Event()

    def watcher() -> None:
        w = watch.Watch()
        for ev in w.stream(
            core.list_namespaced_config_map,
            namespace,
            field_selector="metadata.name=fin",
            resource_version=created["metadata"]["resourceVersion"],
            timeout_seconds=20,
        ):
            seen.append((ev["type"], ev["raw_object"]))
            if ev["type"] == "DELETED":
                break
        done.set()

    if HAS_WATCH:
        thread = threading.Thread(target=watcher, daemon=True)
        thread.start()

    r = api.delete(f"{base}/fin")
    assert r.status_code == 200, r.text
    deleting = r.json()
    assert deleting["kind"] == "ConfigMap"
    assert deleting["metadata"]["deletionTimestamp"]
    assert deleting["metadata"]["deletionGracePeriodSeconds"] == 0
    read = core.read_namespaced_config_map("fin", namespace)
    assert read.metadata.deletion_timestamp is not None

    # Deleting again changes nothing; adding a finalizer is refused.
    again = api.delete(f"{base}/fin").json()
    assert (
        again["metadata"]["deletionTimestamp"]
        == deleting["metadata"]["deletionTimestamp"]
    )
    more = dict(
        deleting,
        metadata={
            **deleting["metadata"],
            "finalizers": ["example.com/hold", "example.com/new"],
        },
    )
    status = assert_status(api.put(f"{base}/fin", more), 422, "Invalid")
    assert (
        "no new finalizers can be added if the object is being deleted"
        in status["message"]
    )

    # An update that keeps the finalizer keeps the object and its deletionTimestamp.
    labelled = dict(deleting, metadata={**deleting["metadata"], "labels": {"x": "y"}})
    labelled["metadata"].pop("deletionTimestamp")
    kept = api.put(f"{base}/fin", labelled).json()
    assert (
        kept["metadata"]["deletionTimestamp"]
        == deleting["metadata"]["deletionTimestamp"]
    )

    kept["metadata"]["finalizers"] = []
    r = api.put(f"{base}/fin", kept)
    assert r.status_code == 200, r.text
    assert gone(api, f"{base}/fin")

    if HAS_WATCH:
        assert done.wait(20)
        types = [t for t, _ in seen]
        assert types[-1] == "DELETED", types
        assert "MODIFIED" in types
        modified = [o for t, o in seen if t == "MODIFIED"]
        assert modified[0]["metadata"]["deletionTimestamp"]


def test_delete_preconditions(api, namespace):
    """preconditions.uid / resourceVersion that do not match → 409 Conflict; in the
    body or as the Python client sends them."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    obj = api.post(base, cm("pre")).json()
    wrong_uid = {
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "preconditions": {"uid": "0c7e2f5e-0000-0000-0000-000000000000"},
    }
    status = assert_status(api.delete(f"{base}/pre", json=wrong_uid), 409, "Conflict")
    assert "Precondition failed: UID in precondition" in status["message"]
    wrong_rv = {"preconditions": {"resourceVersion": "1"}}
    assert_status(api.delete(f"{base}/pre", json=wrong_rv), 409, "Conflict")
    right = {
        "preconditions": {
            "uid": obj["metadata"]["uid"],
            "resourceVersion": obj["metadata"]["resourceVersion"],
        }
    }
    r = api.delete(f"{base}/pre", json=right)
    assert r.status_code == 200 and r.json()["status"] == "Success", r.text


def test_delete_dry_run_and_grace_period(api, namespace):
    """dryRun deletes nothing (body or query); gracePeriodSeconds is accepted."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    api.post(base, cm("dry", finalizers=["example.com/x"]))
    r = api.delete(f"{base}/dry", params={"dryRun": "All"})
    assert r.status_code == 200 and r.json()["metadata"]["deletionTimestamp"]
    assert "deletionTimestamp" not in api.get(f"{base}/dry").json()["metadata"]
    r = api.delete(f"{base}/dry", json={"dryRun": ["All"], "gracePeriodSeconds": 5})
    assert "deletionTimestamp" not in api.get(f"{base}/dry").json()["metadata"]
    r = api.delete(f"{base}/dry", params={"gracePeriodSeconds": "0"})
    assert r.json()["metadata"]["deletionTimestamp"]
    obj = r.json()
    obj["metadata"]["finalizers"] = []
    assert api.put(f"{base}/dry", obj).status_code == 200
    assert gone(api, f"{base}/dry")


def test_deletecollection_with_label_selector(api, k8s_api_client, namespace):
    """deletecollection deletes what the selector matches, honours finalizers and dryRun."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    for i in range(4):
        api.post(base, cm(f"sel{i}", labels={"batch": "a" if i < 3 else "b"}))
    api.post(base, cm("held", labels={"batch": "a"}, finalizers=["example.com/x"]))
    r = api.delete(base, params={"labelSelector": "batch=a", "dryRun": "All"})
    assert r.status_code == 200, r.text
    assert len(api.get(base, params={"labelSelector": "batch=a"}).json()["items"]) == 4
    core = client.CoreV1Api(k8s_api_client)
    core.delete_collection_namespaced_config_map(namespace, label_selector="batch=a")
    left = {i["metadata"]["name"]: i for i in api.get(base).json()["items"]}
    assert set(left) >= {"sel3", "held"} and not {"sel0", "sel1", "sel2"} & set(left)
    assert left["held"]["metadata"]["deletionTimestamp"]
    held = left["held"]
    held["metadata"]["finalizers"] = []
    api.put(f"{base}/held", held)
    assert gone(api, f"{base}/held")


def test_kubectl_delete_waits_for_finalizers(kapi_server, api, namespace, tmp_path):
    """``kubectl delete --wait`` returns once another client removes the finalizer."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    api.post(base, cm("waited", finalizers=["example.com/x"]))

    def release() -> None:
        wait_for(
            lambda: "deletionTimestamp" in api.get(f"{base}/waited").json()["metadata"],
            what="deletionTimestamp",
        )
        obj = api.get(f"{base}/waited").json()
        obj["metadata"]["finalizers"] = []
        api.put(f"{base}/waited", obj)

    thread = threading.Thread(target=release, daemon=True)
    thread.start()
    out = kapi_server.kubectl(
        "delete", "configmap", "waited", "-n", namespace, "--wait", "--timeout=30s"
    )
    assert 'configmap "waited" deleted' in out.stdout
    thread.join(10)
    assert gone(api, f"{base}/waited")


def test_update_cannot_start_a_deletion(api, namespace):
    """A client cannot set deletionTimestamp with an update: kube's immutable-field error."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    obj = api.post(base, cm("imm")).json()
    obj["metadata"]["deletionTimestamp"] = "2030-01-01T00:00:00Z"
    status = assert_status(api.put(f"{base}/imm", obj), 422, "Invalid")
    assert "metadata.deletionTimestamp" in status["message"]
    assert "field is immutable" in status["message"]


def test_orphan_dependents_false_answers_accepted(api, namespace):
    """kube answers 202 when an object is not deleted at once and the client set
    orphanDependents=false; 200 otherwise."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    api.post(base, cm("acc", finalizers=["example.com/x"]))
    r = api.delete(f"{base}/acc", json={"orphanDependents": False})
    assert r.status_code == 202, r.text
    assert r.json()["metadata"]["deletionTimestamp"]
    assert api.delete(f"{base}/acc").status_code == 200
    obj = r.json()
    obj["metadata"]["finalizers"] = []
    api.put(f"{base}/acc", obj)
    assert gone(api, f"{base}/acc")
