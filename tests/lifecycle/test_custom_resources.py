"""The lifecycle over custom resources: propagation policies on a chain of three
custom objects (and a ConfigMap owned by one), namespace termination deleting
them, a custom resource's own finalizer holding its namespace."""

from __future__ import annotations

import uuid

import pytest

from tests.lifecycle.conftest import cm, gone, owner_ref, wait_for

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def widget_crd(group: str) -> dict:
    """A namespaced CRD ``widgets.<group>`` served at v1, any content kept."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {
                "plural": "widgets",
                "singular": "widget",
                "kind": "Widget",
                "listKind": "WidgetList",
            },
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                }
            ],
        },
    }


@pytest.fixture(scope="module")
def widgets(api):
    """A namespaced CRD ``widgets.<random>.example.com`` served at v1; its group."""
    group = f"lc{uuid.uuid4().hex[:6]}.example.com"
    r = api.post(CRD_PATH, widget_crd(group))
    assert r.status_code == 201, r.text
    wait_for(
        lambda: api.get(f"/apis/{group}/v1/widgets").status_code == 200,
        what="CRD served",
    )
    yield group
    api.delete(f"{CRD_PATH}/widgets.{group}")


def widget(
    name: str, owners: list[dict] | None = None, finalizers: list[str] | None = None
) -> dict:
    meta: dict = {"name": name}
    if owners:
        meta["ownerReferences"] = owners
    if finalizers:
        meta["finalizers"] = finalizers
    return {"kind": "Widget", "metadata": meta, "spec": {"size": 1}}


def wpath(group: str, namespace: str, name: str = "") -> str:
    base = f"/apis/{group}/v1/namespaces/{namespace}/widgets"
    return f"{base}/{name}" if name else base


def make_chain(api, group: str, namespace: str, prefix: str, block: bool) -> list[dict]:
    def post(body):
        body["apiVersion"] = f"{group}/v1"
        r = api.post(wpath(group, namespace), body)
        assert r.status_code == 201, r.text
        return r.json()

    a = post(widget(f"{prefix}-a"))
    b = post(widget(f"{prefix}-b", owners=[owner_ref(a, block)]))
    c = post(widget(f"{prefix}-c", owners=[owner_ref(b, block)]))
    return [a, b, c]


@pytest.mark.parametrize("policy", ["Background", "Foreground", "Orphan"])
def test_policies_on_a_chain_of_custom_resources(api, widgets, namespace, policy):
    """Each policy on a ← b ← c Widgets, plus a ConfigMap owned by c."""
    a, b, c = make_chain(api, widgets, namespace, policy.lower(), block=True)
    owned = api.post(
        f"/api/v1/namespaces/{namespace}/configmaps", cm("owned", owners=[owner_ref(c)])
    ).json()
    cm_path = f"/api/v1/namespaces/{namespace}/configmaps/owned"
    r = api.delete(
        wpath(widgets, namespace, a["metadata"]["name"]),
        json={"propagationPolicy": policy},
    )
    assert r.status_code == 200, r.text
    paths = [wpath(widgets, namespace, o["metadata"]["name"]) for o in (a, b, c)]
    if policy == "Orphan":
        wait_for(lambda: gone(api, paths[0]), what="owner gone")
        assert "ownerReferences" not in api.get(paths[1]).json()["metadata"]
        assert (
            api.get(paths[2]).status_code == 200 and api.get(cm_path).status_code == 200
        )
        return
    if policy == "Foreground":
        assert "foregroundDeletion" in r.json()["metadata"]["finalizers"]
    wait_for(lambda: all(gone(api, p) for p in (*paths, cm_path)), what="chain gone")
    assert owned["metadata"]["uid"]


def test_custom_resources_of_a_kind_created_a_moment_ago_are_collected(api, namespace):
    """The workers learn a CRD created a moment ago when they meet its kind, not
    at their next catalog refresh: a chain of custom resources created and
    deleted right after its CRD is collected (it used to be dropped by a worker
    whose catalog predated the CRD)."""
    # Keep the workers busy looking objects up just before the CRD appears: a
    # ConfigMap whose owner never existed is collected by a worker.
    stray = cm(
        "stray",
        owners=[{"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": str(uuid.uuid4())}],
    )
    assert api.post(f"/api/v1/namespaces/{namespace}/configmaps", stray).status_code == 201
    wait_for(lambda: gone(api, f"/api/v1/namespaces/{namespace}/configmaps/stray"), what="stray collected")

    group = f"lcnew{uuid.uuid4().hex[:6]}.example.com"
    assert api.post(CRD_PATH, widget_crd(group)).status_code == 201
    try:
        wait_for(
            lambda: api.get(wpath(group, namespace)).status_code == 200,
            interval=0.01,
            what="CRD served",
        )
        a, b, c = make_chain(api, group, namespace, "new", block=False)
        r = api.delete(wpath(group, namespace, "new-a"), json={"propagationPolicy": "Background"})
        assert r.status_code == 200, r.text
        paths = [wpath(group, namespace, o["metadata"]["name"]) for o in (a, b, c)]
        wait_for(lambda: all(gone(api, p) for p in paths), what="chain gone", timeout=30)
    finally:
        api.delete(f"{CRD_PATH}/widgets.{group}")


def test_namespace_termination_deletes_custom_resources(api, widgets):
    """Deleting a namespace deletes its custom resources too; one with a finalizer
    holds the namespace (NamespaceFinalizersRemaining names the kind) until
    released."""
    ns = f"lc-cr-{uuid.uuid4().hex[:6]}"
    assert api.post("/api/v1/namespaces", {"metadata": {"name": ns}}).status_code == 201
    for i in range(5):
        body = widget(f"w{i}", finalizers=["example.com/hold"] if i == 0 else None)
        body["apiVersion"] = f"{widgets}/v1"
        assert api.post(wpath(widgets, ns), body).status_code == 201
    assert api.delete(f"/api/v1/namespaces/{ns}").status_code == 200

    def only_held():
        items = api.get(wpath(widgets, ns)).json()["items"]
        return [i["metadata"]["name"] for i in items] == ["w0"]

    wait_for(only_held, what="unheld widgets deleted")

    def remaining():
        conds = {
            c["type"]: c
            for c in api.get(f"/api/v1/namespaces/{ns}")
            .json()["status"]
            .get("conditions", [])
        }
        msg = conds.get("NamespaceContentRemaining", {}).get("message", "")
        return (
            msg if msg.endswith(f"widgets.{widgets} has 1 resource instances") else None
        )

    wait_for(remaining, what="content remaining condition")
    held = api.get(wpath(widgets, ns, "w0")).json()
    held["metadata"]["finalizers"] = []
    assert api.put(wpath(widgets, ns, "w0"), held).status_code == 200
    wait_for(lambda: gone(api, f"/api/v1/namespaces/{ns}"), what="namespace gone")
