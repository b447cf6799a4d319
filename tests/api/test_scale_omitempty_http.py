"""autoscaling/v1 Scale as kube writes it: ``spec.replicas`` is ``omitempty``.

kube's ScaleSpec declares ``replicas int32 `json:"replicas,omitempty"```, so a
Scale of 0 replicas reads ``"spec": {}``; ScaleStatus.replicas is not
omitempty and stays ``0``. Reading back works both ways: a Scale whose spec
has no replicas asks for 0, as Go decodes it.
"""

from __future__ import annotations


def _deployment(name: str, replicas: int) -> dict:
    labels = {"app": name}
    return {
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
    }


def test_scale_of_zero_replicas_has_an_empty_spec(api, namespace, kapi_server):
    base = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    assert api.post(base, _deployment("idle", 0)).status_code == 201
    scale = api.get(f"{base}/idle/scale").json()
    assert scale["spec"] == {}
    assert scale["status"]["replicas"] == 0
    # Written back unchanged it still means 0.
    again = api.put(f"{base}/idle/scale", scale)
    assert again.status_code == 200, again.text
    assert again.json()["spec"] == {}
    assert api.get(f"{base}/idle").json()["spec"]["replicas"] == 0


def test_scale_without_replicas_scales_to_zero(api, namespace, kapi_server):
    base = f"/apis/apps/v1/namespaces/{namespace}/deployments"
    assert api.post(base, _deployment("web", 3)).status_code == 201
    scale = api.get(f"{base}/web/scale").json()
    assert scale["spec"] == {"replicas": 3}
    written = api.put(f"{base}/web/scale", {**scale, "spec": {}})
    assert written.status_code == 200, written.text
    assert written.json()["spec"] == {}
    assert api.get(f"{base}/web").json()["spec"]["replicas"] == 0
    # kubectl scale up and back down to 0 through the same subresource.
    kapi_server.kubectl("scale", "deployment/web", "--replicas=2", "-n", namespace)
    assert api.get(f"{base}/web/scale").json()["spec"] == {"replicas": 2}
    kapi_server.kubectl("scale", "deployment/web", "--replicas=0", "-n", namespace)
    assert api.get(f"{base}/web/scale").json()["spec"] == {}
