"""kube's defaults for built-in kinds, as a real cluster returns them.

Each case creates a minimal manifest and compares what comes back with what
kube-apiserver returns for it (its ``SetDefaults_*`` and ``+default`` markers;
fields that kube's admission plugins add, such as a Pod's serviceAccountName or
priority, are not defaulting and are left out). The same object read back after
a PUT of the original manifest must be unchanged: defaults apply on every write.
"""

from __future__ import annotations

import copy

import pytest

_CONTAINER_IN = {
    "name": "c",
    "image": "nginx:1.27",
    "ports": [{"containerPort": 80}],
    "livenessProbe": {"httpGet": {"port": 80}},
    "readinessProbe": {"grpc": {"port": 9090}},
    "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
}
_CONTAINER_OUT = {
    "name": "c",
    "image": "nginx:1.27",
    "imagePullPolicy": "IfNotPresent",
    "ports": [{"containerPort": 80, "protocol": "TCP"}],
    "livenessProbe": {
        "httpGet": {"path": "/", "port": 80, "scheme": "HTTP"},
        "timeoutSeconds": 1,
        "periodSeconds": 10,
        "successThreshold": 1,
        "failureThreshold": 3,
    },
    "readinessProbe": {
        "grpc": {"port": 9090, "service": ""},
        "timeoutSeconds": 1,
        "periodSeconds": 10,
        "successThreshold": 1,
        "failureThreshold": 3,
    },
    "env": [{"name": "N", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
    "resources": {},
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "File",
}
_VOLUMES_IN = [
    {"name": "scratch"},
    {"name": "s", "secret": {"secretName": "x"}},
    {"name": "m", "configMap": {"name": "x"}},
    {"name": "h", "hostPath": {"path": "/tmp"}},
]
_VOLUMES_OUT = [
    {"name": "scratch", "emptyDir": {}},
    {"name": "s", "secret": {"secretName": "x", "defaultMode": 420}},
    {"name": "m", "configMap": {"name": "x", "defaultMode": 420}},
    {"name": "h", "hostPath": {"path": "/tmp", "type": ""}},
]
_POD_SPEC_OUT = {
    "containers": [_CONTAINER_OUT],
    "volumes": _VOLUMES_OUT,
    "dnsPolicy": "ClusterFirst",
    "restartPolicy": "Always",
    "schedulerName": "default-scheduler",
    "securityContext": {},
    "terminationGracePeriodSeconds": 30,
}
_LABELS = {"app": "a"}
_TEMPLATE_IN = {"metadata": {"labels": _LABELS}, "spec": {"containers": [_CONTAINER_IN], "volumes": _VOLUMES_IN}}
_TEMPLATE_OUT = {"metadata": {"labels": _LABELS}, "spec": _POD_SPEC_OUT}
_JOB_TEMPLATE_IN = copy.deepcopy(_TEMPLATE_IN)
_JOB_TEMPLATE_IN["spec"]["restartPolicy"] = "Never"
_JOB_TEMPLATE_OUT = copy.deepcopy(_TEMPLATE_OUT)
_JOB_TEMPLATE_OUT["spec"]["restartPolicy"] = "Never"

#: case -> (collection, manifest without defaults, what kube returns: a subset of the object)
CASES = {
    "pod": (
        "/api/v1/namespaces/{ns}/pods",
        {"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [_CONTAINER_IN], "volumes": _VOLUMES_IN}},
        {"spec": {**_POD_SPEC_OUT, "enableServiceLinks": True}},
    ),
    "deployment": (
        "/apis/apps/v1/namespaces/{ns}/deployments",
        {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"selector": {"matchLabels": _LABELS}, "template": _TEMPLATE_IN}},
        {
            "spec": {
                "replicas": 1,
                "revisionHistoryLimit": 10,
                "progressDeadlineSeconds": 600,
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                "template": _TEMPLATE_OUT,
            }
        },
    ),
    "statefulset": (
        "/apis/apps/v1/namespaces/{ns}/statefulsets",
        {
            "apiVersion": "apps/v1",
            "kind": "StatefulSet",
            "spec": {
                "serviceName": "s",
                "selector": {"matchLabels": _LABELS},
                "template": _TEMPLATE_IN,
                "volumeClaimTemplates": [
                    {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
                ],
            },
        },
        {
            "spec": {
                "replicas": 1,
                "revisionHistoryLimit": 10,
                "podManagementPolicy": "OrderedReady",
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
                "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
                "template": _TEMPLATE_OUT,
                "volumeClaimTemplates": [
                    {
                        "apiVersion": "v1",
                        "kind": "PersistentVolumeClaim",
                        "metadata": {"name": "data"},
                        "spec": {
                            "accessModes": ["ReadWriteOnce"],
                            "resources": {"requests": {"storage": "1Gi"}},
                            "volumeMode": "Filesystem",
                        },
                        "status": {"phase": "Pending"},
                    }
                ],
            }
        },
    ),
    "daemonset": (
        "/apis/apps/v1/namespaces/{ns}/daemonsets",
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "spec": {"selector": {"matchLabels": _LABELS}, "template": _TEMPLATE_IN}},
        {
            "spec": {
                "revisionHistoryLimit": 10,
                "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
                "template": _TEMPLATE_OUT,
            }
        },
    ),
    "job": (
        "/apis/batch/v1/namespaces/{ns}/jobs",
        {"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": _JOB_TEMPLATE_IN}},
        {
            "spec": {
                "backoffLimit": 6,
                "completions": 1,
                "parallelism": 1,
                "completionMode": "NonIndexed",
                "suspend": False,
                "podReplacementPolicy": "TerminatingOrFailed",
                "template": {"spec": _JOB_TEMPLATE_OUT["spec"]},
            }
        },
    ),
    "cronjob": (
        "/apis/batch/v1/namespaces/{ns}/cronjobs",
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": _JOB_TEMPLATE_IN}}},
        },
        {
            "spec": {
                "concurrencyPolicy": "Allow",
                "suspend": False,
                "successfulJobsHistoryLimit": 3,
                "failedJobsHistoryLimit": 1,
                "jobTemplate": {"spec": {"template": _JOB_TEMPLATE_OUT}},
            }
        },
    ),
    "service": (
        "/api/v1/namespaces/{ns}/services",
        {"apiVersion": "v1", "kind": "Service", "spec": {"selector": _LABELS, "ports": [{"port": 80}]}},
        {
            "spec": {
                "type": "ClusterIP",
                "sessionAffinity": "None",
                "internalTrafficPolicy": "Cluster",
                "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}],
            }
        },
    ),
    "loadbalancer": (
        "/api/v1/namespaces/{ns}/services",
        {"apiVersion": "v1", "kind": "Service", "spec": {"type": "LoadBalancer", "sessionAffinity": "ClientIP", "ports": [{"port": 443, "targetPort": "https"}]}},
        {
            "spec": {
                "externalTrafficPolicy": "Cluster",
                "internalTrafficPolicy": "Cluster",
                "allocateLoadBalancerNodePorts": True,
                "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 10800}},
                "ports": [{"port": 443, "protocol": "TCP", "targetPort": "https"}],
            }
        },
    ),
    "pvc": (
        "/api/v1/namespaces/{ns}/persistentvolumeclaims",
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}},
        {"spec": {"volumeMode": "Filesystem"}, "status": {"phase": "Pending"}},
    ),
    "secret": (
        "/api/v1/namespaces/{ns}/secrets",
        {"apiVersion": "v1", "kind": "Secret", "stringData": {"a": "b"}},
        {"type": "Opaque", "data": {"a": "Yg=="}},
    ),
    "networkpolicy": (
        "/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies",
        {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]}},
        {"spec": {"policyTypes": ["Ingress", "Egress"], "egress": [{"ports": [{"port": 53, "protocol": "TCP"}]}]}},
    ),
    "rolebinding": (
        "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "u"}, {"kind": "ServiceAccount", "name": "default", "namespace": "x"}],
        },
        {
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [
                {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "u"},
                {"kind": "ServiceAccount", "name": "default", "namespace": "x"},
            ],
        },
    ),
    "hpa": (
        "/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers",
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "d"}, "maxReplicas": 3},
        },
        {
            "spec": {
                "minReplicas": 1,
                "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}],
            }
        },
    ),
}


def _subset(expected, actual, path="") -> list[str]:
    """Where ``actual`` differs from ``expected`` (dicts compared key by key)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = []
        for key, value in expected.items():
            if key not in actual:
                out.append(f"{path}.{key}: missing")
            else:
                out += _subset(value, actual[key], f"{path}.{key}")
        return out
    if isinstance(expected, list) and isinstance(actual, list) and len(expected) == len(actual):
        return [d for i, (e, a) in enumerate(zip(expected, actual, strict=True)) for d in _subset(e, a, f"{path}[{i}]")]
    return [] if expected == actual else [f"{path}: {actual!r} != {expected!r}"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_defaults_match_kube(api, namespace, case):
    """The created object carries kube's defaults; a PUT of the manifest again
    (kubectl replace) changes nothing, so its resourceVersion stays."""
    collection, manifest, expected = CASES[case]
    collection = collection.format(ns=namespace)
    body = {**copy.deepcopy(manifest), "metadata": {"name": "d"}}
    created = api.post(collection, body)
    assert created.status_code == 201, created.text
    assert _subset(expected, created.json()) == []
    replaced = api.put(f"{collection}/d", body)
    assert replaced.status_code == 200, replaced.text
    assert replaced.json()["metadata"]["resourceVersion"] == created.json()["metadata"]["resourceVersion"]


def test_pod_container_is_exactly_kubes(api, namespace):
    """A Pod's container as kube returns it, field for field (nothing more)."""
    _, manifest, _ = CASES["pod"]
    created = api.post(f"/api/v1/namespaces/{namespace}/pods", {**manifest, "metadata": {"name": "p"}})
    assert created.status_code == 201, created.text
    assert created.json()["spec"]["containers"] == [_CONTAINER_OUT]
    assert created.json()["spec"]["volumes"] == _VOLUMES_OUT


def test_image_pull_policy_follows_the_tag(api, namespace):
    """kube's SetDefaults_Container: ``latest`` or no tag pulls Always, any other
    tag or a digest IfNotPresent; a value given is kept."""
    images = {
        "nginx": "Always",
        "nginx:latest": "Always",
        "registry.local:5000/team/nginx": "Always",
        "nginx:1.27": "IfNotPresent",
        "nginx@sha256:" + "a" * 64: "IfNotPresent",
    }
    containers = [{"name": f"c{i}", "image": image} for i, image in enumerate(images)]
    containers.append({"name": "given", "image": "nginx", "imagePullPolicy": "Never"})
    created = api.post(
        f"/api/v1/namespaces/{namespace}/pods",
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pulls"}, "spec": {"containers": containers}},
    )
    assert created.status_code == 201, created.text
    got = {c["image"] + "|" + c["name"]: c["imagePullPolicy"] for c in created.json()["spec"]["containers"]}
    assert [got[f"{image}|c{i}"] for i, image in enumerate(images)] == list(images.values())
    assert got["nginx|given"] == "Never"
