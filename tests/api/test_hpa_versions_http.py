"""HorizontalPodAutoscaler in autoscaling/v1 and autoscaling/v2: one stored object,
two served forms converted as kube converts them (the cpu target is v1's
``targetCPUUtilizationPercentage``; every other v2 metric rides in an annotation)."""

from __future__ import annotations

import json

from tests.api.conftest import assert_status

METRICS = "autoscaling.alpha.kubernetes.io/metrics"


def _base(namespace: str, version: str) -> str:
    return (
        f"/apis/autoscaling/{version}/namespaces/{namespace}/horizontalpodautoscalers"
    )


def _ref() -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}


def test_both_versions_in_discovery(api):
    group = api.get("/apis/autoscaling").json()
    assert [v["version"] for v in group["versions"]] == ["v2", "v1"]
    assert group["preferredVersion"]["version"] == "v2"
    v1 = api.get("/apis/autoscaling/v1").json()
    hpa = next(r for r in v1["resources"] if r["name"] == "horizontalpodautoscalers")
    assert hpa["kind"] == "HorizontalPodAutoscaler" and hpa["shortNames"] == ["hpa"]
    assert any(r["name"] == "horizontalpodautoscalers/status" for r in v1["resources"])


def test_v1_cpu_target_reads_as_v2_resource_metric(api, namespace):
    body = {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "one"},
        "spec": {
            "scaleTargetRef": _ref(),
            "maxReplicas": 5,
            "targetCPUUtilizationPercentage": 60,
        },
    }
    created = api.post(_base(namespace, "v1"), body)
    assert created.status_code == 201, created.text
    v1 = created.json()
    assert v1["apiVersion"] == "autoscaling/v1"
    assert v1["spec"] == {
        "scaleTargetRef": _ref(),
        "minReplicas": 1,
        "maxReplicas": 5,
        "targetCPUUtilizationPercentage": 60,
    }
    assert v1["status"] == {"currentReplicas": 0, "desiredReplicas": 0}
    v2 = api.get(f"{_base(namespace, 'v2')}/one").json()
    assert v2["apiVersion"] == "autoscaling/v2"
    assert v2["metadata"]["uid"] == v1["metadata"]["uid"]
    assert v2["metadata"]["resourceVersion"] == v1["metadata"]["resourceVersion"]
    assert v2["spec"]["metrics"] == [
        {
            "type": "Resource",
            "resource": {
                "name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 60},
            },
        }
    ]
    assert "annotations" not in v2["metadata"]


def test_v2_without_metrics_defaults_cpu_80_percent(api, namespace):
    body = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "bare"},
        "spec": {"scaleTargetRef": _ref(), "maxReplicas": 3},
    }
    v2 = api.post(_base(namespace, "v2"), body).json()
    assert v2["spec"]["metrics"][0]["resource"]["target"] == {
        "type": "Utilization",
        "averageUtilization": 80,
    }
    v1 = api.get(f"{_base(namespace, 'v1')}/bare").json()
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 80


def test_other_v2_metrics_survive_a_v1_round_trip(api, namespace):
    pods_metric = {
        "type": "Pods",
        "pods": {
            "metric": {"name": "requests_per_second"},
            "target": {"type": "AverageValue", "averageValue": "1k"},
        },
    }
    cpu = {
        "type": "Resource",
        "resource": {
            "name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 70},
        },
    }
    body = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "mixed", "annotations": {"team": "shop"}},
        "spec": {
            "scaleTargetRef": _ref(),
            "maxReplicas": 4,
            "metrics": [cpu, pods_metric],
        },
    }
    assert api.post(_base(namespace, "v2"), body).status_code == 201
    v1 = api.get(f"{_base(namespace, 'v1')}/mixed").json()
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 70
    notes = v1["metadata"]["annotations"]
    assert notes["team"] == "shop"
    assert json.loads(notes[METRICS]) == [
        {
            "type": "Pods",
            "pods": {"metricName": "requests_per_second", "targetAverageValue": "1k"},
        }
    ]
    # A v1 read-modify-write changes the cpu target and keeps the Pods metric.
    v1["spec"]["targetCPUUtilizationPercentage"] = 50
    updated = api.put(f"{_base(namespace, 'v1')}/mixed", v1)
    assert updated.status_code == 200, updated.text
    assert updated.json()["metadata"]["generation"] == 2
    v2 = api.get(f"{_base(namespace, 'v2')}/mixed").json()
    assert v2["spec"]["metrics"] == [
        pods_metric,
        {
            **cpu,
            "resource": {
                **cpu["resource"],
                "target": {"type": "Utilization", "averageUtilization": 50},
            },
        },
    ]
    assert v2["metadata"]["annotations"] == {"team": "shop"}


def test_v2_status_reads_through_v1(api, namespace):
    body = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "st"},
        "spec": {"scaleTargetRef": _ref(), "maxReplicas": 4},
    }
    created = api.post(_base(namespace, "v2"), body).json()
    created["status"] = {
        "currentReplicas": 2,
        "desiredReplicas": 3,
        "currentMetrics": [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "current": {"averageUtilization": 91, "averageValue": "450m"},
                },
            }
        ],
        "conditions": [
            {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale"}
        ],
    }
    r = api.put(f"{_base(namespace, 'v2')}/st/status", created)
    assert r.status_code == 200, r.text
    v1 = api.get(f"{_base(namespace, 'v1')}/st").json()
    assert v1["status"] == {
        "currentReplicas": 2,
        "desiredReplicas": 3,
        "currentCPUUtilizationPercentage": 91,
    }
    notes = v1["metadata"]["annotations"]
    assert (
        json.loads(notes["autoscaling.alpha.kubernetes.io/conditions"])[0]["type"]
        == "AbleToScale"
    )
    # A v1 spec update keeps the full v2 status.
    v1["spec"]["maxReplicas"] = 6
    assert api.put(f"{_base(namespace, 'v1')}/st", v1).status_code == 200
    v2 = api.get(f"{_base(namespace, 'v2')}/st").json()
    assert v2["spec"]["maxReplicas"] == 6
    assert v2["status"] == created["status"]
    assert "annotations" not in v2["metadata"]


def test_v1_validation_and_bad_annotation(api, namespace):
    body = {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "bad"},
        "spec": {"scaleTargetRef": _ref(), "minReplicas": 4, "maxReplicas": 2},
    }
    status = assert_status(api.post(_base(namespace, "v1"), body), 422, "Invalid")
    assert [c["field"] for c in status["details"]["causes"]] == ["spec.maxReplicas"]
    body["spec"]["minReplicas"] = 1
    body["metadata"]["annotations"] = {METRICS: "not json"}
    assert_status(api.post(_base(namespace, "v1"), body), 400, "BadRequest")
    assert api.get(f"{_base(namespace, 'v2')}/bad").status_code == 404


def test_kubectl_autoscale_and_get(kapi_server, api, namespace):
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        },
    }
    assert (
        api.post(
            f"/apis/apps/v1/namespaces/{namespace}/deployments", deployment
        ).status_code
        == 201
    )
    kapi_server.kubectl(
        "autoscale",
        "deployment",
        "web",
        "-n",
        namespace,
        "--min=2",
        "--max=7",
        "--cpu-percent=65",
    )
    out = kapi_server.kubectl(
        "get", "hpa", "web", "-n", namespace, "--no-headers"
    ).stdout
    assert out.split()[:5] == ["web", "Deployment/web", "cpu:", "<unknown>/65%", "2"], (
        out
    )
    v1 = kapi_server.kubectl(
        "get",
        "horizontalpodautoscalers.v1.autoscaling",
        "web",
        "-n",
        namespace,
        "-o",
        "jsonpath={.apiVersion} {.spec.targetCPUUtilizationPercentage} {.spec.maxReplicas}",
    ).stdout
    assert v1 == "autoscaling/v1 65 7"


def test_v1_create_sets_no_status_through_annotations(api, namespace):
    conditions = [{"type": "AbleToScale", "status": "True"}]
    body = {
        "apiVersion": "autoscaling/v1",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {
            "name": "sneaky",
            "annotations": {
                "autoscaling.alpha.kubernetes.io/conditions": json.dumps(conditions)
            },
        },
        "spec": {"scaleTargetRef": _ref(), "maxReplicas": 2},
    }
    created = api.post(_base(namespace, "v1"), body)
    assert created.status_code == 201, created.text
    assert "annotations" not in created.json()["metadata"]
    v2 = api.get(f"{_base(namespace, 'v2')}/sneaky").json()
    assert "status" not in v2 and "annotations" not in v2["metadata"]


BEHAVIOR = "autoscaling.alpha.kubernetes.io/behavior"


def test_v2_behavior_survives_a_v1_round_trip(api, namespace):
    """spec.behavior has no v1 field: it rides in kube's behavior annotation, so a
    v1 read-modify-write keeps it."""
    behavior = {
        "scaleDown": {
            "stabilizationWindowSeconds": 120,
            "selectPolicy": "Min",
            "policies": [{"type": "Percent", "value": 10, "periodSeconds": 60}],
        }
    }
    body = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "calm"},
        "spec": {"scaleTargetRef": _ref(), "maxReplicas": 4, "behavior": behavior},
    }
    created = api.post(_base(namespace, "v2"), body)
    assert created.status_code == 201, created.text
    stored_behavior = created.json()["spec"]["behavior"]

    v1 = api.get(f"{_base(namespace, 'v1')}/calm").json()
    assert json.loads(v1["metadata"]["annotations"][BEHAVIOR]) == stored_behavior
    v1["spec"]["maxReplicas"] = 6
    updated = api.put(f"{_base(namespace, 'v1')}/calm", v1)
    assert updated.status_code == 200, updated.text

    v2 = api.get(f"{_base(namespace, 'v2')}/calm").json()
    assert v2["spec"]["maxReplicas"] == 6
    assert v2["spec"]["behavior"] == stored_behavior
    assert BEHAVIOR not in (v2["metadata"].get("annotations") or {})


def test_v2_writes_drop_the_v1_round_trip_annotations(api, namespace):
    """As kube's v2 conversion does: the annotations that carry v2 fields through
    v1 mean nothing in v2, and a v2 write does not keep them; others stay."""
    body = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {
            "name": "plain",
            "annotations": {
                METRICS: "[]",
                BEHAVIOR: "{}",
                "autoscaling.alpha.kubernetes.io/conditions": "[]",
                "autoscaling.alpha.kubernetes.io/current-metrics": "[]",
                "team": "web",
            },
        },
        "spec": {"scaleTargetRef": _ref(), "maxReplicas": 3},
    }
    created = api.post(_base(namespace, "v2"), body)
    assert created.status_code == 201, created.text
    assert created.json()["metadata"]["annotations"] == {"team": "web"}
    v2 = created.json()
    v2["metadata"]["annotations"][METRICS] = "[]"
    updated = api.put(f"{_base(namespace, 'v2')}/plain", v2)
    assert updated.status_code == 200, updated.text
    assert updated.json()["metadata"]["annotations"] == {"team": "web"}
