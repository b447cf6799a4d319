"""A Pod's spec is immutable but for what kube lets an update change (its
images, activeDeadlineSeconds, added tolerations): a quota's charge for its
requests stays true, and so does the e2e suite's check that a Pod cannot
change its resources."""

from __future__ import annotations

from tests.api.conftest import assert_status


def _pod(name: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [
                {"name": "c", "image": "busybox:1", "resources": {"requests": {"cpu": "500m"}}}
            ]
        },
    }


def test_pod_resources_cannot_change(api, namespace):
    path = f"/api/v1/namespaces/{namespace}/pods"
    created = api.post(path, _pod("p"))
    assert created.status_code == 201, created.text
    pod = created.json()
    pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "100m"
    refused = assert_status(api.put(f"{path}/p", pod), 422, "Invalid")
    assert refused["details"]["causes"][0]["field"] == "spec"
    assert "pod updates may not change fields other than" in refused["message"]
    assert api.get(f"{path}/p").json()["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "500m"


def test_pod_image_and_deadline_may_change(api, namespace):
    path = f"/api/v1/namespaces/{namespace}/pods"
    pod = api.post(path, _pod("q")).json()
    pod["spec"]["containers"][0]["image"] = "busybox:2"
    pod["spec"]["activeDeadlineSeconds"] = 30
    updated = api.put(f"{path}/q", pod)
    assert updated.status_code == 200, updated.text
    spec = updated.json()["spec"]
    assert (spec["containers"][0]["image"], spec["activeDeadlineSeconds"]) == ("busybox:2", 30)
