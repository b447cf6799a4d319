"""kstatus rules of ``sync.health`` (the answers ``spec.wait`` relies on),
case by case as cli-utils' kstatus computes them."""

from __future__ import annotations

import pytest

from sync.health import CURRENT, FAILED, IN_PROGRESS, compute


def _obj(api_version: str, kind: str, spec: dict | None = None, status: dict | None = None,
         generation: int = 1, **meta) -> dict:
    out = {"apiVersion": api_version, "kind": kind,
           "metadata": {"name": "x", "namespace": "ns", "generation": generation, **meta}}
    if spec is not None:
        out["spec"] = spec
    if status is not None:
        out["status"] = status
    return out


def _available(replicas: int = 2, **over) -> dict:
    status = {"observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas,
              "readyReplicas": replicas, "availableReplicas": replicas,
              "conditions": [{"type": "Available", "status": "True"},
                             {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}]}
    status.update(over)
    return status


@pytest.mark.parametrize(("status", "expected", "message"), [
    (None, IN_PROGRESS, "Replicas: 0/2"),
    (_available(), CURRENT, "Deployment is available. Replicas: 2"),
    (_available(updatedReplicas=1), IN_PROGRESS, "Updated: 1/2"),
    (_available(availableReplicas=1), IN_PROGRESS, "Available: 1/2"),
    (_available(replicas=3, updatedReplicas=2), IN_PROGRESS, "Pending termination: 1"),
    (_available(observedGeneration=0), IN_PROGRESS, "Deployment generation is 1, but latest observed generation is 0"),
    (_available(conditions=[{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}]),
     IN_PROGRESS, "Deployment not Available"),
    (_available(conditions=[{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded"}]),
     FAILED, "Progress deadline exceeded"),
])
def test_deployment(status, expected, message):
    health = compute(_obj("apps/v1", "Deployment", {"replicas": 2, "progressDeadlineSeconds": 600}, status))
    assert (health.status, health.message) == (expected, message)


def test_deployment_without_progress_deadline_needs_no_progressing_condition():
    status = _available(conditions=[{"type": "Available", "status": "True"}])
    assert compute(_obj("apps/v1", "Deployment", {"replicas": 2}, status)).status == CURRENT


def test_statefulset_and_daemonset():
    sts = {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "currentReplicas": 3,
           "updatedReplicas": 3, "currentRevision": "r1", "updateRevision": "r1"}
    assert compute(_obj("apps/v1", "StatefulSet", {"replicas": 3}, sts)).status == CURRENT
    assert compute(_obj("apps/v1", "StatefulSet", {"replicas": 3}, {**sts, "updateRevision": "r2"})).message \
        == "Waiting for updated revision to match current"
    assert compute(_obj("apps/v1", "StatefulSet", {"replicas": 3}, {**sts, "readyReplicas": 1})).message \
        == "Ready: 1/3"
    ds = {"observedGeneration": 1, "desiredNumberScheduled": 2, "currentNumberScheduled": 2,
          "updatedNumberScheduled": 2, "numberAvailable": 2, "numberReady": 2}
    assert compute(_obj("apps/v1", "DaemonSet", {}, ds)).status == CURRENT
    assert compute(_obj("apps/v1", "DaemonSet", {}, {**ds, "numberAvailable": 1})).message == "Available: 1/2"
    # A DaemonSet the controller has not seen yet is not current (kstatus is strict here).
    assert compute(_obj("apps/v1", "DaemonSet", {}, None)).status == IN_PROGRESS


def test_job_pvc_crd_namespace():
    job = _obj("batch/v1", "Job", {}, {"startTime": "t", "succeeded": 1,
                                       "conditions": [{"type": "Complete", "status": "True"}]})
    assert compute(job).status == CURRENT
    failed = _obj("batch/v1", "Job", {}, {"failed": 3, "conditions": [{"type": "Failed", "status": "True"}]})
    assert compute(failed).status == FAILED
    assert compute(_obj("batch/v1", "Job", {}, None)).message == "Job not started"
    assert compute(_obj("v1", "PersistentVolumeClaim", {}, {"phase": "Pending"})).status == IN_PROGRESS
    assert compute(_obj("v1", "PersistentVolumeClaim", {}, {"phase": "Bound"})).status == CURRENT
    crd = "apiextensions.k8s.io/v1"
    assert compute(_obj(crd, "CustomResourceDefinition", {}, None)).status == IN_PROGRESS
    assert compute(_obj(crd, "CustomResourceDefinition", {},
                        {"conditions": [{"type": "Established", "status": "True"}]})).status == CURRENT
    assert compute(_obj(crd, "CustomResourceDefinition", {},
                        {"conditions": [{"type": "NamesAccepted", "status": "False", "message": "clash"}]})) \
        .status == FAILED
    assert compute(_obj("v1", "Namespace", {}, {"phase": "Active"})).status == CURRENT
    assert compute(_obj("v1", "Namespace", {}, {"phase": "Terminating"})).status == IN_PROGRESS


def test_generic_rules_and_ready_condition():
    # Kinds without rules or status: current once they exist.
    assert compute(_obj("v1", "ConfigMap")).status == CURRENT
    assert compute(None).status not in (CURRENT, FAILED)
    assert compute(_obj("v1", "ConfigMap", deletionTimestamp="2026-01-01T00:00:00Z")).status == IN_PROGRESS
    # Custom resources: Ready, Reconciling and Stalled conditions; observedGeneration.
    cr = "example.com/v1"
    assert compute(_obj(cr, "Widget", {}, {"conditions": [{"type": "Ready", "status": "True"}]})).status == CURRENT
    assert compute(_obj(cr, "Widget", {}, {"conditions": [{"type": "Ready", "status": "False",
                                                           "message": "waiting"}]})).message == "waiting"
    assert compute(_obj(cr, "Widget", {}, {"conditions": [{"type": "Stalled", "status": "True"}]})).status == FAILED
    assert compute(_obj(cr, "Widget", {}, {"conditions": [{"type": "Reconciling", "status": "True"}]})).status \
        == IN_PROGRESS
    stale = _obj(cr, "Widget", {}, {"observedGeneration": 1, "conditions": [{"type": "Ready", "status": "True"}]},
                 generation=2)
    assert compute(stale).status == IN_PROGRESS
