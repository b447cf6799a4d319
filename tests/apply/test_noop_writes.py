"""A write that changes nothing writes nothing, for every write path and kind.

kube compares the object after decoding (defaults included), admission and the
strategy with the stored one and, when they are equal, answers with the stored
object: no new resourceVersion, no change-log row, no watch event. A GitOps loop
or a CI job that re-applies unchanged manifests must not churn watchers.

Each case creates an object from a manifest that leaves kube's defaults out,
then sends it back every way a client can (PUT of the manifest as
``kubectl replace`` does, PUT of what was read, the three patch types with
nothing in them, a repeated server-side apply, /status and /scale writes of
what was read). Then one real change: a watch from the first resourceVersion
must show that change as its first event, so none of the writes before it made
one.
"""

from __future__ import annotations

import copy
import json
import time

import pytest
import yaml

from tests.apply.conftest import API

_TEMPLATE = {
    "metadata": {"labels": {"app": "a"}},
    "spec": {
        "containers": [
            {
                "name": "c",
                "image": "nginx:1.27",
                "ports": [{"containerPort": 80}],
                "livenessProbe": {"httpGet": {"port": 80}},
                "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
            }
        ],
        "volumes": [{"name": "v"}, {"name": "s", "secret": {"secretName": "x"}}],
    },
}
_JOB_TEMPLATE = copy.deepcopy(_TEMPLATE)
_JOB_TEMPLATE["spec"]["restartPolicy"] = "Never"
_SELECTOR = {"matchLabels": {"app": "a"}}

#: (collection path, manifest without kube's defaults)
CASES = {
    "configmap": ("/api/v1/namespaces/default/configmaps", {"data": {"a": "1"}}),
    "secret": ("/api/v1/namespaces/default/secrets", {"stringData": {"a": "b"}}),
    "service": (
        "/api/v1/namespaces/default/services",
        {"spec": {"selector": {"app": "a"}, "ports": [{"port": 80}]}},
    ),
    "pod": ("/api/v1/namespaces/default/pods", {"spec": _TEMPLATE["spec"]}),
    "deployment": (
        "/apis/apps/v1/namespaces/default/deployments",
        {"spec": {"selector": _SELECTOR, "template": _TEMPLATE}},
    ),
    "statefulset": (
        "/apis/apps/v1/namespaces/default/statefulsets",
        {
            "spec": {
                "serviceName": "s",
                "selector": _SELECTOR,
                "template": _TEMPLATE,
                "volumeClaimTemplates": [
                    {
                        "metadata": {"name": "data"},
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "1Gi"}},
                        },
                    }
                ],
            }
        },
    ),
    "daemonset": (
        "/apis/apps/v1/namespaces/default/daemonsets",
        {"spec": {"selector": _SELECTOR, "template": _TEMPLATE}},
    ),
    "job": ("/apis/batch/v1/namespaces/default/jobs", {"spec": {"template": _JOB_TEMPLATE}}),
    "cronjob": (
        "/apis/batch/v1/namespaces/default/cronjobs",
        {"spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": _JOB_TEMPLATE}}}},
    ),
    "hpa": (
        "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
        {"spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}, "maxReplicas": 3}},
    ),
    "pvc": (
        "/api/v1/namespaces/default/persistentvolumeclaims",
        {"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
    ),
    "networkpolicy": (
        "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies",
        {"spec": {"podSelector": {}, "ingress": [{"ports": [{"port": 80}]}]}},
    ),
    "rolebinding": (
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
        {"roleRef": {"kind": "ClusterRole", "name": "view"}, "subjects": [{"kind": "User", "name": "u"}]},
    ),
}

_KINDS = {
    "configmap": ("v1", "ConfigMap"),
    "secret": ("v1", "Secret"),
    "service": ("v1", "Service"),
    "pod": ("v1", "Pod"),
    "deployment": ("apps/v1", "Deployment"),
    "statefulset": ("apps/v1", "StatefulSet"),
    "daemonset": ("apps/v1", "DaemonSet"),
    "job": ("batch/v1", "Job"),
    "cronjob": ("batch/v1", "CronJob"),
    "hpa": ("autoscaling/v2", "HorizontalPodAutoscaler"),
    "pvc": ("v1", "PersistentVolumeClaim"),
    "networkpolicy": ("networking.k8s.io/v1", "NetworkPolicy"),
    "rolebinding": ("rbac.authorization.k8s.io/v1", "RoleBinding"),
}


def _manifest(case: str, name: str) -> dict:
    api_version, kind = _KINDS[case]
    body = copy.deepcopy(CASES[case][1])
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, **body}


def _first_event(api: API, path: str, name: str, since: str) -> dict:
    response = api.session.get(
        api.base + path,
        params={
            "watch": "1",
            "resourceVersion": since,
            "fieldSelector": f"metadata.name={name}",
            "timeoutSeconds": "30",
        },
        stream=True,
        timeout=60,
    )
    try:
        for line in response.iter_lines():
            if line:
                return json.loads(line)
    finally:
        response.close()
    raise AssertionError("the watch ended without an event")


#: What a controller has written once it is done with a new object of a kind
#: (kapi.workloads): the writes below start from the settled object.
_SETTLED = {
    "deployment": lambda obj: obj.get("status", {}).get("updatedReplicas") == 1
    and "deployment.kubernetes.io/revision" in obj["metadata"].get("annotations", {}),
    "job": lambda obj: obj.get("status", {}).get("active") == 1,
}


def _settled(api: API, case: str, path: str) -> dict:
    """The object's metadata once its controller is done with it."""
    done = _SETTLED.get(case, lambda obj: True)
    deadline = time.monotonic() + 30
    while not done(obj := api.request("GET", path).json()):
        assert time.monotonic() < deadline, f"the {case} controller did not settle"
        time.sleep(0.1)
    return obj["metadata"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_unchanged_writes_write_nothing(api: API, name: str, case: str) -> None:
    """Every way of sending an object back unchanged keeps its resourceVersion
    and makes no watch event; the first real change is the next event."""
    collection, _ = CASES[case]
    path = f"{collection}/{name}"
    manifest = _manifest(case, name)
    created = api.request("POST", collection, manifest)
    assert created.status_code == 201, created.text
    settled = _settled(api, case, path)
    if settled.get("annotations"):
        # What the controller added (a Deployment's revision): a PUT of the
        # manifest without it would remove it, in kube too.
        manifest["metadata"]["annotations"] = settled["annotations"]
    applied = api.request(
        "PATCH", path, manifest, content_type="application/apply-patch+yaml",
        params={"fieldManager": "ci", "force": "true"},
    )
    assert applied.status_code == 200, applied.text
    since = applied.json()["metadata"]["resourceVersion"]

    def current() -> dict:
        response = api.request("GET", path)
        assert response.status_code == 200, response.text
        return response.json()

    writes = [
        ("PUT manifest", "PUT", path, {**manifest, "metadata": {**manifest["metadata"], "resourceVersion": since}}, "application/json"),
        ("PUT read", "PUT", path, current(), "application/json"),
        ("merge patch", "PATCH", path, {}, "application/merge-patch+json"),
        ("json patch", "PATCH", path, [], "application/json-patch+json"),
        ("strategic merge patch", "PATCH", path, {"metadata": {}}, "application/strategic-merge-patch+json"),
        ("apply again", "PATCH", path, manifest, "application/apply-patch+yaml"),
    ]
    for label, method, where, body, content_type in writes:
        params = {"fieldManager": "ci"} if content_type.startswith("application/apply") else {}
        response = api.request(method, where, body, content_type=content_type, params=params)
        assert response.status_code == 200, f"{label}: {response.text}"
        assert response.json()["metadata"]["resourceVersion"] == since, label
    status = api.request("PUT", path + "/status", current())
    if status.status_code != 404:
        assert status.status_code == 200, status.text
        assert status.json()["metadata"]["resourceVersion"] == since, "PUT /status"
    scale = api.request("GET", path + "/scale")
    if scale.status_code == 200:
        put = api.request("PUT", path + "/scale", scale.json())
        assert put.status_code == 200, put.text
        assert put.json()["metadata"]["resourceVersion"] == since, "PUT /scale"
    assert current()["metadata"]["resourceVersion"] == since

    changed = api.request(
        "PATCH", path, {"metadata": {"labels": {"changed": "yes"}}}, content_type="application/merge-patch+json"
    )
    assert changed.status_code == 200, changed.text
    event = _first_event(api, collection, name, since)
    assert event["type"] == "MODIFIED"
    assert event["object"]["metadata"]["labels"]["changed"] == "yes"


def test_kubectl_apply_unchanged_secret_with_string_data(kapi_server, api: API, name: str, tmp_path) -> None:
    """Client-side ``kubectl apply`` of an unchanged Secret that uses stringData,
    keeps the stored resourceVersion, however often it runs."""
    manifest = tmp_path / "secret.yaml"
    manifest.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": name, "namespace": "default"},
                "stringData": {"password": "s3cret"},
            }
        )
    )
    kapi_server.kubectl("apply", "-f", str(manifest))
    path = f"/api/v1/namespaces/default/secrets/{name}"
    first = api.request("GET", path).json()["metadata"]["resourceVersion"]
    for _ in range(2):
        kapi_server.kubectl("apply", "-f", str(manifest))
        assert api.request("GET", path).json()["metadata"]["resourceVersion"] == first
