"""The garbage collector: propagation policies on chains of owned objects,
dependents of missing owners, invalid owner references, kubectl --cascade."""

from __future__ import annotations

import importlib.util

import pytest
from kubernetes import client

from tests.lifecycle.conftest import cm, gone, lifecycle_state, owner_ref, wait_for

HAS_WATCH = importlib.util.find_spec("kapi.api.watch") is not None


def chain(api, namespace: str, prefix: str, block: bool = False) -> list[dict]:
    """Three ConfigMaps: a ← b ← c (each owned by the previous one)."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    a = api.post(base, cm(f"{prefix}-a")).json()
    b = api.post(base, cm(f"{prefix}-b", owners=[owner_ref(a, block)])).json()
    c = api.post(base, cm(f"{prefix}-c", owners=[owner_ref(b, block)])).json()
    return [a, b, c]


def path(namespace: str, obj: dict) -> str:
    return f"/api/v1/namespaces/{namespace}/configmaps/{obj['metadata']['name']}"


def test_background_deletes_owner_then_dependents(api, namespace):
    """Background: the owner goes at once, then its dependents, down the chain."""
    a, b, c = chain(api, namespace, "bg")
    r = api.delete(path(namespace, a), json={"propagationPolicy": "Background"})
    assert r.status_code == 200 and r.json()["kind"] == "Status", r.text
    assert gone(api, path(namespace, a))
    wait_for(
        lambda: gone(api, path(namespace, b)) and gone(api, path(namespace, c)),
        what="dependents collected",
    )


def test_foreground_keeps_owner_until_blocking_dependents_are_gone(api, namespace):
    """Foreground: the owner gets the foregroundDeletion finalizer and stays (readable,
    deleting) while dependents with blockOwnerDeletion exist; a dependent with a
    finalizer of its own holds the whole chain."""
    a, b, c = chain(api, namespace, "fg", block=True)
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    # c holds the chain with a finalizer of its own.
    c["metadata"]["finalizers"] = ["example.com/hold"]
    c = api.put(path(namespace, c), c).json()
    r = api.delete(path(namespace, a), params={"propagationPolicy": "Foreground"})
    assert r.status_code == 200, r.text
    owner = r.json()
    assert owner["metadata"]["deletionTimestamp"]
    assert "foregroundDeletion" in owner["metadata"]["finalizers"]

    def c_deleting():
        got = api.get(path(namespace, c)).json()
        return "deletionTimestamp" in got["metadata"]

    wait_for(c_deleting, what="c being deleted")
    b_now = api.get(path(namespace, b)).json()
    assert b_now["metadata"]["deletionTimestamp"]
    assert "foregroundDeletion" in b_now["metadata"]["finalizers"]
    assert not gone(api, path(namespace, a))
    held = api.get(path(namespace, c)).json()
    held["metadata"]["finalizers"] = []
    assert api.put(path(namespace, c), held).status_code == 200
    wait_for(
        lambda: all(gone(api, path(namespace, o)) for o in (a, b, c)), what="chain gone"
    )
    assert api.get(base).json()["items"] == [] or all(
        i["metadata"]["name"].startswith("kube-root")
        for i in api.get(base).json()["items"]
    )


def test_orphan_strips_owner_references(api, namespace):
    """Orphan: the owner gets the orphan finalizer, its dependents lose their
    reference to it and stay; then the owner goes."""
    a, b, c = chain(api, namespace, "or")
    r = api.delete(path(namespace, a), json={"propagationPolicy": "Orphan"})
    assert r.status_code == 200
    assert "orphan" in r.json()["metadata"]["finalizers"]
    wait_for(lambda: gone(api, path(namespace, a)), what="owner gone")
    b_now = api.get(path(namespace, b)).json()
    assert "ownerReferences" not in b_now["metadata"]
    c_now = api.get(path(namespace, c)).json()
    assert c_now["metadata"]["ownerReferences"][0]["uid"] == b["metadata"]["uid"]


def test_orphan_dependents_false_is_background(api, k8s_api_client, namespace):
    """The Python client's propagation_policy and orphan_dependents reach the GC."""
    core = client.CoreV1Api(k8s_api_client)
    a, b, c = chain(api, namespace, "py")
    core.delete_namespaced_config_map(
        a["metadata"]["name"], namespace, orphan_dependents=True
    )
    wait_for(lambda: gone(api, path(namespace, a)), what="owner gone")
    assert "ownerReferences" not in api.get(path(namespace, b)).json()["metadata"]
    core.delete_namespaced_config_map(
        b["metadata"]["name"], namespace, propagation_policy="Background"
    )
    wait_for(lambda: gone(api, path(namespace, c)), what="c collected")


def test_dependent_of_missing_owner_is_collected(api, kapi_server, namespace):
    """An object whose owner never existed (or has another uid) is collected; one
    with a live owner stays; a solid owner keeps a dependent that loses its dangling
    reference."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    live = api.post(base, cm("live")).json()
    ghost = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "ghost",
        "uid": "6a1f2b3c-1111-2222-3333-444455556666",
    }
    wrong_uid = {**owner_ref(live), "uid": "6a1f2b3c-1111-2222-3333-777788889999"}
    api.post(base, cm("orphaned", owners=[ghost]))
    api.post(base, cm("wrong-uid", owners=[wrong_uid]))
    api.post(base, cm("kept", owners=[owner_ref(live), ghost]))
    try:
        wait_for(
            lambda: gone(api, f"{base}/orphaned") and gone(api, f"{base}/wrong-uid"),
            what="dependents of missing owners collected",
        )
    except AssertionError as exc:
        raise AssertionError(
            f"{exc}\n{lifecycle_state(kapi_server, namespace)}"
        ) from None

    def kept_cleaned():
        meta = api.get(f"{base}/kept").json()["metadata"]
        return [r["uid"] for r in meta.get("ownerReferences", [])] == [
            live["metadata"]["uid"]
        ]

    wait_for(kept_cleaned, what="dangling reference removed")


def test_cross_namespace_owner_is_absent_with_event(api, namespace):
    """A namespaced owner in another namespace counts as absent: the dependent is
    collected and an OwnerRefInvalidNamespace Event names it."""
    other = api.post(
        "/api/v1/namespaces/default/configmaps", cm(f"{namespace}-owner")
    ).json()
    try:
        base = f"/api/v1/namespaces/{namespace}/configmaps"
        dep = api.post(base, cm("cross", owners=[owner_ref(other)])).json()
        wait_for(
            lambda: gone(api, f"{base}/cross"),
            what="cross-namespace dependent collected",
        )

        def event():
            items = api.get(
                f"/api/v1/namespaces/{namespace}/events",
                params={"fieldSelector": "reason=OwnerRefInvalidNamespace"},
            ).json()["items"]
            return [
                e for e in items if e["involvedObject"]["uid"] == dep["metadata"]["uid"]
            ]

        ev = wait_for(event, what="OwnerRefInvalidNamespace event")[0]
        assert ev["type"] == "Warning"
        assert ev["source"]["component"] == "garbage-collector-controller"
        assert ev["involvedObject"]["kind"] == "ConfigMap"
        assert "does not exist in namespace" in ev["message"]
        assert ev["count"] >= 1 and ev["firstTimestamp"] and ev["lastTimestamp"]
    finally:
        api.delete(f"/api/v1/namespaces/default/configmaps/{namespace}-owner")


def test_cluster_scoped_dependent_with_namespaced_owner_is_kept(api, namespace):
    """A cluster-scoped dependent naming a namespaced owner is unresolvable: it is
    kept (kube cannot collect it) and an Event is recorded."""
    owner = api.post(f"/api/v1/namespaces/{namespace}/configmaps", cm("nsowner")).json()
    name = f"{namespace}-dep"
    ns = api.post(
        "/api/v1/namespaces",
        {"metadata": {"name": name, "ownerReferences": [owner_ref(owner)]}},
    ).json()
    try:

        def event():
            items = api.get(
                "/api/v1/namespaces/default/events",
                params={"fieldSelector": "reason=OwnerRefInvalidNamespace"},
            ).json()["items"]
            return [
                e for e in items if e["involvedObject"]["uid"] == ns["metadata"]["uid"]
            ]

        wait_for(event, what="event for the cluster-scoped dependent")
        assert api.get(f"/api/v1/namespaces/{name}").status_code == 200
    finally:
        api.delete(f"/api/v1/namespaces/{name}")


@pytest.mark.parametrize("cascade", ["background", "orphan", "foreground"])
def test_kubectl_delete_cascade(kapi_server, api, namespace, cascade):
    """``kubectl delete --cascade=... --wait`` on the head of a chain."""
    if cascade == "foreground" and not HAS_WATCH:
        pytest.skip("kubectl --wait on an object that stays needs watch")
    a, b, c = chain(api, namespace, f"k{cascade[:2]}", block=True)
    out = kapi_server.kubectl(
        "delete",
        "configmap",
        a["metadata"]["name"],
        "-n",
        namespace,
        f"--cascade={cascade}",
        "--wait",
        "--timeout=60s",
    )
    assert "deleted" in out.stdout
    assert gone(api, path(namespace, a))
    if cascade == "orphan":
        # kubectl waits for the owner itself, i.e. for the orphan finalizer to finish.
        assert "ownerReferences" not in api.get(path(namespace, b)).json()["metadata"]
        assert not gone(api, path(namespace, c))
    elif cascade == "foreground":
        assert gone(api, path(namespace, b)) and gone(api, path(namespace, c))
    else:
        wait_for(
            lambda: gone(api, path(namespace, b)) and gone(api, path(namespace, c)),
            what="dependents collected",
        )


def test_foreground_owner_releases_dependent_with_another_owner(api, namespace):
    """A dependent that blocks a foreground deletion but has another live owner is
    kept: it loses the reference to the deleting owner, which then goes."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    a = api.post(base, cm("fga")).json()
    x = api.post(base, cm("fgx")).json()
    b = api.post(
        base, cm("fgb", owners=[owner_ref(a, block=True), owner_ref(x)])
    ).json()
    r = api.delete(f"{base}/fga", json={"propagationPolicy": "Foreground"})
    assert r.status_code == 200
    wait_for(lambda: gone(api, f"{base}/fga"), timeout=10, what="owner gone")
    kept = api.get(f"{base}/fgb").json()
    assert [ref["uid"] for ref in kept["metadata"]["ownerReferences"]] == [
        x["metadata"]["uid"]
    ]
    assert "deletionTimestamp" not in kept["metadata"]
    assert kept["metadata"]["uid"] == b["metadata"]["uid"]
