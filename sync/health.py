"""Health of applied objects by kstatus rules (``spec.wait``).

The rules of ``sigs.k8s.io/cli-utils/pkg/kstatus``, which Flux's
kustomize-controller uses through ``fluxcd/pkg/ssa``, reduced to the three
answers a Sync needs: ``CURRENT`` (healthy), ``IN_PROGRESS`` (not yet) and
``FAILED`` (will not get healthy by waiting: a Job that failed, a Deployment
past its progress deadline, ``Stalled=True``).

Generic rules come first (being deleted; ``metadata.generation`` not yet
observed; ``Reconciling``/``Stalled`` conditions), then the rules of the kind
(Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, Pod, PVC, Service, CRD,
Namespace), then a ``Ready`` condition if the object has one; anything else is
current once it exists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["CURRENT", "FAILED", "IN_PROGRESS", "Health", "compute", "line"]

CURRENT = "Current"
IN_PROGRESS = "InProgress"
FAILED = "Failed"
NOT_FOUND = "NotFound"

Object = dict[str, Any]


@dataclass(frozen=True)
class Health:
    status: str
    message: str

    @property
    def healthy(self) -> bool:
        return self.status == CURRENT


def _int(obj: Object, path: str, default: int) -> int:
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return default
        value = value[part]
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _conditions(obj: Object) -> list[dict]:
    conditions = (obj.get("status") or {}).get("conditions")
    return [c for c in conditions if isinstance(c, dict)] if isinstance(conditions, list) else []


def _condition(obj: Object, type_: str) -> dict | None:
    return next((c for c in _conditions(obj) if c.get("type") == type_), None)


def _progress(message: str) -> Health:
    return Health(IN_PROGRESS, message)


def _current(message: str = "Resource is current") -> Health:
    return Health(CURRENT, message)


def _generic(obj: Object) -> Health | None:
    meta = obj.get("metadata") or {}
    if meta.get("deletionTimestamp"):
        return _progress("Resource scheduled for deletion")
    generation = meta.get("generation")
    observed = (obj.get("status") or {}).get("observedGeneration")
    if isinstance(generation, int) and isinstance(observed, int) and observed != generation:
        return _progress(f"{obj.get('kind')} generation is {generation}, "
                         f"but latest observed generation is {observed}")
    for cond in _conditions(obj):
        if cond.get("type") == "Reconciling" and cond.get("status") == "True":
            return _progress(cond.get("message") or "Reconciling")
        if cond.get("type") == "Stalled" and cond.get("status") == "True":
            return Health(FAILED, cond.get("message") or "Stalled")
    return None


def _deployment(obj: Object) -> Health:
    progressing = _int(obj, "spec.progressDeadlineSeconds", 2**31 - 1) == 2**31 - 1
    available = False
    for cond in _conditions(obj):
        if cond.get("type") == "Progressing":
            if cond.get("reason") == "ProgressDeadlineExceeded":
                return Health(FAILED, "Progress deadline exceeded")
            if cond.get("status") == "True" and cond.get("reason") == "NewReplicaSetAvailable":
                progressing = True
        elif cond.get("type") == "Available" and cond.get("status") == "True":
            available = True
    spec = _int(obj, "spec.replicas", 1)
    replicas = _int(obj, "status.replicas", 0)
    updated = _int(obj, "status.updatedReplicas", 0)
    ready = _int(obj, "status.readyReplicas", 0)
    avail = _int(obj, "status.availableReplicas", 0)
    if spec > replicas:
        return _progress(f"Replicas: {replicas}/{spec}")
    if spec > updated:
        return _progress(f"Updated: {updated}/{spec}")
    if replicas > spec:
        return _progress(f"Pending termination: {replicas - spec}")
    if updated > avail:
        return _progress(f"Available: {avail}/{updated}")
    if spec > ready:
        return _progress(f"Ready: {ready}/{spec}")
    if not progressing:
        return _progress("ReplicaSet not Available")
    if not available:
        return _progress("Deployment not Available")
    return _current(f"Deployment is available. Replicas: {replicas}")


def _statefulset(obj: Object) -> Health:
    if ((obj.get("spec") or {}).get("updateStrategy") or {}).get("type") == "OnDelete":
        return _current("StatefulSet is using the OnDelete update strategy")
    spec = _int(obj, "spec.replicas", 1)
    ready = _int(obj, "status.readyReplicas", 0)
    current = _int(obj, "status.currentReplicas", 0)
    updated = _int(obj, "status.updatedReplicas", 0)
    replicas = _int(obj, "status.replicas", 0)
    partition = _int(obj, "spec.updateStrategy.rollingUpdate.partition", -1)
    if spec > replicas:
        return _progress(f"Replicas: {replicas}/{spec}")
    if spec > ready:
        return _progress(f"Ready: {ready}/{spec}")
    if replicas > spec:
        return _progress(f"Pending termination: {replicas - spec}")
    if partition != -1:
        if updated < spec - partition:
            return _progress(f"updated: {updated}/{spec - partition}")
        return _current(f"Partition rollout complete. updated: {updated}")
    if spec > current:
        return _progress(f"current: {current}/{spec}")
    status = obj.get("status") or {}
    if status.get("currentRevision", "") != status.get("updateRevision", ""):
        return _progress("Waiting for updated revision to match current")
    return _current(f"All replicas scheduled as expected. Replicas: {replicas}")


def _daemonset(obj: Object) -> Health:
    if not isinstance((obj.get("metadata") or {}).get("generation"), int):
        return _progress("DaemonSet metadata.generation not found")
    if not isinstance((obj.get("status") or {}).get("observedGeneration"), int):
        return _progress("DaemonSet status.observedGeneration not found")
    desired = _int(obj, "status.desiredNumberScheduled", -1)
    if desired == -1:
        return _progress("Missing .status.desiredNumberScheduled")
    for field, label in (("currentNumberScheduled", "Current"), ("updatedNumberScheduled", "Updated"),
                         ("numberAvailable", "Available"), ("numberReady", "Ready")):
        have = _int(obj, f"status.{field}", 0)
        if desired > have:
            return _progress(f"{label}: {have}/{desired}")
    return _current(f"All replicas scheduled as expected. Replicas: {desired}")


def _replicaset(obj: Object) -> Health:
    failure = _condition(obj, "ReplicaFailure")
    if failure and failure.get("status") == "True":
        return _progress("Replica Failure condition. Check Pods")
    spec = _int(obj, "spec.replicas", 1)
    for field, label in (("fullyLabeledReplicas", "Labelled"), ("availableReplicas", "Available"),
                         ("readyReplicas", "Ready")):
        have = _int(obj, f"status.{field}", 0)
        if spec > have:
            return _progress(f"{label}: {have}/{spec}")
    replicas = _int(obj, "status.replicas", 0)
    if replicas > spec:
        return _progress(f"Pending termination: {replicas - spec}")
    return _current(f"ReplicaSet is available. Replicas: {replicas}")


def _job(obj: Object) -> Health:
    parallelism = _int(obj, "spec.parallelism", 1)
    completions = _int(obj, "spec.completions", parallelism)
    for cond in _conditions(obj):
        if cond.get("status") != "True":
            continue
        if cond.get("type") == "Complete":
            return _current(f"Job Completed. succeeded: {_int(obj, 'status.succeeded', 0)}/{completions}")
        if cond.get("type") == "Failed":
            return Health(FAILED, f"Job Failed. failed: {_int(obj, 'status.failed', 0)}/{completions}")
        if cond.get("type") == "Suspended":
            return _current("Job is suspended")
    if not (obj.get("status") or {}).get("startTime"):
        return _progress("Job not started")
    return _current("Job in progress")


def _pod(obj: Object) -> Health:
    phase = (obj.get("status") or {}).get("phase", "")
    if phase in ("Succeeded", "Failed"):
        return _current(f"Pod has completed ({phase})")
    if phase == "Running":
        ready = _condition(obj, "Ready")
        if ready and ready.get("status") == "True":
            return _current("Pod is Ready")
        for cs in (obj.get("status") or {}).get("containerStatuses") or []:
            if (((cs or {}).get("state") or {}).get("waiting") or {}).get("reason") == "CrashLoopBackOff":
                return Health(FAILED, f"Container {cs.get('name')} in CrashLoop state")
        return _progress("Pod is running but is not Ready")
    if phase == "Pending":
        return _progress("Pod is in the Pending phase")
    return _progress("Pod phase not available")


def _pvc(obj: Object) -> Health:
    phase = (obj.get("status") or {}).get("phase", "unknown")
    if phase != "Bound":
        return _progress(f"PVC is not Bound. phase: {phase}")
    return _current("PVC is Bound")


def _service(obj: Object) -> Health:
    spec = obj.get("spec") or {}
    if spec.get("type") == "LoadBalancer" and not spec.get("clusterIP"):
        return _progress("ClusterIP not set. Service type: LoadBalancer")
    return _current("Service is ready")


def _crd(obj: Object) -> Health:
    for cond in _conditions(obj):
        if cond.get("type") == "NamesAccepted" and cond.get("status") == "False":
            return Health(FAILED, cond.get("message") or "names not accepted")
        if cond.get("type") == "Established":
            if cond.get("status") == "True":
                return _current("CRD is established")
            if cond.get("status") == "False" and cond.get("reason") != "Installing":
                return Health(FAILED, cond.get("message") or "not established")
    return _progress("Install in progress")


def _namespace(obj: Object) -> Health:
    phase = (obj.get("status") or {}).get("phase", "Active")
    if phase != "Active":
        return _progress(f"Namespace is {phase}")
    return _current("Namespace is Active")


_KINDS = {
    ("apps", "Deployment"): _deployment,
    ("apps", "StatefulSet"): _statefulset,
    ("apps", "DaemonSet"): _daemonset,
    ("apps", "ReplicaSet"): _replicaset,
    ("batch", "Job"): _job,
    ("", "Pod"): _pod,
    ("", "PersistentVolumeClaim"): _pvc,
    ("", "Service"): _service,
    ("", "Namespace"): _namespace,
    ("apiextensions.k8s.io", "CustomResourceDefinition"): _crd,
}


def compute(obj: Object | None) -> Health:
    """The kstatus health of a live object (None: it does not exist)."""
    if obj is None:
        return Health(NOT_FOUND, "Resource not found")
    generic = _generic(obj)
    if generic is not None:
        return generic
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    rule = _KINDS.get((group, str(obj.get("kind", ""))))
    if rule is not None:
        return rule(obj)
    ready = _condition(obj, "Ready")
    if ready is not None:
        if ready.get("status") == "True":
            return _current(ready.get("message") or "Ready")
        return _progress(ready.get("message") or f"Ready is {ready.get('status')}")
    return _current()


def line(kind: str, namespace: str, name: str, verdict: Health) -> str:
    """How a Sync's status names an object that is not healthy."""
    return f"{kind}/{namespace + '/' if namespace else ''}{name} status: '{verdict.status}': {verdict.message}"
