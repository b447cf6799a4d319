"""Enum fields of built-in kinds (kapi.schema.enums): an unsupported value is a 422
with kube's ``Unsupported value`` message at the field path, wherever the type is
used (a pod template inside a workload too), through kubectl apply."""

from __future__ import annotations

import textwrap

import pytest

from tests.api.conftest import assert_status

_POD = "{containers: [{name: c, image: nginx}]}"

CASES = {
    "deployment-strategy": (
        f"""
        apiVersion: apps/v1
        kind: Deployment
        metadata: {{name: bad}}
        spec:
          strategy: {{type: BlueGreen}}
          selector: {{matchLabels: {{app: a}}}}
          template: {{metadata: {{labels: {{app: a}}}}, spec: {_POD}}}
        """,
        'spec.strategy.type: Unsupported value: "BlueGreen": supported values: "Recreate", "RollingUpdate"',
    ),
    "deployment-template-pull-policy": (
        """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: bad}
        spec:
          selector: {matchLabels: {app: a}}
          template:
            metadata: {labels: {app: a}}
            spec: {containers: [{name: c, image: nginx, imagePullPolicy: Sometimes}]}
        """,
        'spec.template.spec.containers[0].imagePullPolicy: Unsupported value: "Sometimes": '
        'supported values: "Always", "IfNotPresent", "Never"',
    ),
    "statefulset-pod-management": (
        f"""
        apiVersion: apps/v1
        kind: StatefulSet
        metadata: {{name: bad}}
        spec:
          serviceName: s
          podManagementPolicy: AllAtOnce
          selector: {{matchLabels: {{app: a}}}}
          template: {{metadata: {{labels: {{app: a}}}}, spec: {_POD}}}
        """,
        'spec.podManagementPolicy: Unsupported value: "AllAtOnce": supported values: "OrderedReady", "Parallel"',
    ),
    "daemonset-update-strategy": (
        f"""
        apiVersion: apps/v1
        kind: DaemonSet
        metadata: {{name: bad}}
        spec:
          updateStrategy: {{type: Rolling}}
          selector: {{matchLabels: {{app: a}}}}
          template: {{metadata: {{labels: {{app: a}}}}, spec: {_POD}}}
        """,
        'spec.updateStrategy.type: Unsupported value: "Rolling": supported values: "OnDelete", "RollingUpdate"',
    ),
    "cronjob-concurrency-and-dns": (
        """
        apiVersion: batch/v1
        kind: CronJob
        metadata: {name: bad}
        spec:
          schedule: "* * * * *"
          concurrencyPolicy: Sometimes
          jobTemplate:
            spec:
              template:
                spec:
                  restartPolicy: Never
                  dnsPolicy: Google
                  containers: [{name: c, image: busybox}]
        """,
        'spec.concurrencyPolicy: Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"',
    ),
    "service-type-and-protocol": (
        """
        apiVersion: v1
        kind: Service
        metadata: {name: bad}
        spec:
          type: Public
          ports: [{port: 80, protocol: HTTP}]
        """,
        'spec.type: Unsupported value: "Public": supported values: "ClusterIP", "ExternalName", '
        '"LoadBalancer", "NodePort"',
    ),
    "pvc-access-mode": (
        """
        apiVersion: v1
        kind: PersistentVolumeClaim
        metadata: {name: bad}
        spec:
          accessModes: [ReadWriteOnce, WriteMany]
          resources: {requests: {storage: 1Gi}}
        """,
        'spec.accessModes[1]: Unsupported value: "WriteMany": supported values: "ReadOnlyMany", '
        '"ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"',
    ),
    "networkpolicy-policy-types": (
        """
        apiVersion: networking.k8s.io/v1
        kind: NetworkPolicy
        metadata: {name: bad}
        spec:
          podSelector: {}
          policyTypes: [Inbound]
        """,
        'spec.policyTypes[0]: Unsupported value: "Inbound": supported values: "Egress", "Ingress"',
    ),
    "pod-toleration-effect": (
        """
        apiVersion: v1
        kind: Pod
        metadata: {name: bad}
        spec:
          tolerations: [{key: k, operator: Exists, effect: NoRun}]
          containers: [{name: c, image: nginx}]
        """,
        'spec.tolerations[0].effect: Unsupported value: "NoRun": supported values: "NoSchedule", '
        '"PreferNoSchedule", "NoExecute"',
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_unsupported_value_is_rejected_by_kubectl_apply(kapi_server, namespace, case):
    manifest, expected = CASES[case]
    result = kapi_server.kubectl(
        "apply",
        "-n",
        namespace,
        "-f",
        "-",
        input=textwrap.dedent(manifest),
        check=False,
    )
    assert result.returncode != 0
    assert "is invalid" in result.stderr and expected in result.stderr, result.stderr


def test_status_lists_every_unsupported_value(api, namespace):
    """The Status names each field with reason FieldValueNotSupported; nothing is stored."""
    body = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "bad"},
        "spec": {
            "completionMode": "Sometimes",
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [
                        {
                            "name": "c",
                            "image": "busybox",
                            "ports": [{"containerPort": 80, "protocol": "tcp"}],
                        }
                    ],
                }
            },
        },
    }
    status = assert_status(
        api.post(f"/apis/batch/v1/namespaces/{namespace}/jobs", body), 422, "Invalid"
    )
    causes = {c["field"]: c for c in status["details"]["causes"]}
    assert causes["spec.completionMode"] == {
        "reason": "FieldValueNotSupported",
        "message": 'Unsupported value: "Sometimes": supported values: "Indexed", "NonIndexed"',
        "field": "spec.completionMode",
    }
    protocol = causes["spec.template.spec.containers[0].ports[0].protocol"]
    assert protocol["reason"] == "FieldValueNotSupported"
    assert (
        protocol["message"]
        == 'Unsupported value: "tcp": supported values: "SCTP", "TCP", "UDP"'
    )
    assert api.get(f"/apis/batch/v1/namespaces/{namespace}/jobs/bad").status_code == 404


def test_supported_values_are_accepted_and_published(api, namespace):
    body = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "ok"},
        "spec": {
            "type": "NodePort",
            "externalTrafficPolicy": "Local",
            "sessionAffinity": "ClientIP",
            "ports": [{"port": 53, "protocol": "UDP"}],
        },
    }
    assert api.post(f"/api/v1/namespaces/{namespace}/services", body).status_code == 201
    doc = api.get("/openapi/v3/api/v1").json()
    pull = doc["components"]["schemas"]["io.k8s.api.core.v1.Container"]["properties"][
        "imagePullPolicy"
    ]
    assert pull["enum"] == ["Always", "IfNotPresent", "Never"]


def test_empty_string_is_defaulted_where_kube_defaults_it(api, namespace):
    """kube decodes "" like a missing field for its non-pointer enum strings and
    defaults it; a pointer field (a Service's internalTrafficPolicy) keeps "" and
    is refused."""
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "empty-enums"},
        "spec": {
            "strategy": {"type": ""},
            "selector": {"matchLabels": {"app": "e"}},
            "template": {
                "metadata": {"labels": {"app": "e"}},
                "spec": {
                    "restartPolicy": "",
                    "dnsPolicy": "",
                    "containers": [
                        {
                            "name": "c",
                            "image": "nginx:1.27",
                            "imagePullPolicy": "",
                            "terminationMessagePolicy": "",
                            "ports": [{"containerPort": 80, "protocol": ""}],
                        }
                    ],
                },
            },
        },
    }
    r = api.post(f"/apis/apps/v1/namespaces/{namespace}/deployments", deployment)
    assert r.status_code == 201, r.text
    spec = r.json()["spec"]
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    pod = spec["template"]["spec"]
    assert (pod["restartPolicy"], pod["dnsPolicy"]) == ("Always", "ClusterFirst")
    container = pod["containers"][0]
    assert container["imagePullPolicy"] == "IfNotPresent"
    assert container["terminationMessagePolicy"] == "File"
    assert container["ports"][0]["protocol"] == "TCP"

    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "empty-enums"},
        "spec": {
            "type": "",
            "sessionAffinity": "",
            "ports": [{"port": 80, "protocol": ""}],
        },
    }
    r = api.post(f"/api/v1/namespaces/{namespace}/services", service)
    assert r.status_code == 201, r.text
    spec = r.json()["spec"]
    assert (spec["type"], spec["sessionAffinity"]) == ("ClusterIP", "None")
    assert spec["ports"][0]["protocol"] == "TCP"

    service["metadata"]["name"] = "empty-pointer"
    service["spec"]["internalTrafficPolicy"] = ""
    r = api.post(f"/api/v1/namespaces/{namespace}/services", service)
    status = assert_status(r, 422, "Invalid")
    assert {
        "reason": "FieldValueNotSupported",
        "field": "spec.internalTrafficPolicy",
        "message": 'Unsupported value: "": supported values: "Cluster", "Local"',
    } in status["details"]["causes"]
