"""The Job controller: Pods of a Job, its deadline, suspension and status.

After kube's ``pkg/controller/job`` (``syncJob``, ``manageJob``). Nothing
runs the Pods, so a Job creates ``parallelism`` Pods (fewer when
``completions`` are nearly reached) and waits; Pods someone marks
``Succeeded`` or ``Failed`` are counted. A finished Job (``Complete`` or
``Failed`` condition) is left alone. ``activeDeadlineSeconds`` fails the
Job with ``DeadlineExceeded`` when it passes (``requeue_after`` until then),
``backoffLimit`` with ``BackoffLimitExceeded``; both delete the active Pods,
as a suspended Job does. kube's ``batch.kubernetes.io/job-tracking`` Pod
finalizer is not used: terminated Pods are counted while they exist.
"""

from __future__ import annotations

from datetime import UTC, datetime

from kapi.registry.store import Registry
from kapi.workloads import api, conditions, ownership, pods
from kapi.workloads.api import Object

__all__ = ["COMPLETION_INDEX", "sync"]

COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"


def _finished(status: Object) -> bool:
    return any(
        c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
        for c in status.get("conditions") or ()
        if isinstance(c, dict)
    )


def _condition(type_: str, status: str, reason: str, message: str) -> dict:
    now = api.now()
    cond = {"type": type_, "status": status, "lastProbeTime": now, "lastTransitionTime": now}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    return cond


def _ensure(conds: list, type_: str, status: str, reason: str, message: str) -> tuple[list, bool]:
    """kube's ``ensureJobConditionStatus``: a False condition is only written
    over an existing one."""
    current = conditions.get(conds, type_)
    if current is not None:
        if current.get("status") == status and current.get("reason") == reason:
            return conds, False
        return [*conditions.remove(conds, type_), _condition(type_, status, reason, message)], True
    if status == "True":
        return [*conds, _condition(type_, status, reason, message)], True
    return conds, False


def sync(namespace: str, name: str, registry: Registry) -> float | None:
    rt = api.resource("batch", "jobs")
    job = api.get(registry, rt, namespace, name)
    if job is None:
        return None
    old = job.get("status") or {}
    if _finished(old):
        return None
    spec = job.get("spec") or {}
    selector = api.selector_of(spec.get("selector"))
    if selector is None or selector.empty:
        return None
    pod_rt = api.resource("", "pods")
    candidates = api.list_objects(registry, pod_rt, namespace, selector)
    candidates += api.owned(registry, pod_rt, job["metadata"]["uid"])
    claimed = ownership.claim(registry, job, selector, pod_rt, candidates)
    live = [p for p in claimed if pods.active(p)]
    phases = [(p.get("status") or {}).get("phase") for p in claimed]
    succeeded, failed = phases.count("Succeeded"), phases.count("Failed")
    status: Object = {k: v for k, v in old.items() if k not in ("active", "ready", "succeeded", "failed")}
    conds = list(old.get("conditions") or ())
    suspended = bool(spec.get("suspend"))
    deleting = "deletionTimestamp" in job["metadata"]
    if not status.get("startTime") and not suspended:
        status["startTime"] = api.now()
    requeue: float | None = None
    finished: dict | None = None
    if failed > int(spec.get("backoffLimit", 6)):
        finished = _condition(
            "Failed", "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit"
        )
    elif spec.get("activeDeadlineSeconds") is not None and status.get("startTime") and not suspended:
        left = _deadline_left(status["startTime"], int(spec["activeDeadlineSeconds"]))
        if left <= 0:
            finished = _condition(
                "Failed", "True", "DeadlineExceeded", "Job was active longer than specified deadline"
            )
        else:
            requeue = left
    completions = spec.get("completions")
    if finished is None and not suspended:
        if completions is None:
            done = succeeded > 0 and not live
        else:
            done = succeeded >= int(completions)
        if done:
            finished = _condition("Complete", "True", "", "")
    if finished is not None:
        for pod in live:
            api.delete(registry, pod_rt, pod)
        live = []
        conds = [*conds, finished]
        if finished["type"] == "Complete":
            status["completionTime"] = api.now()
        requeue = None
    else:
        if suspended:
            conds, changed = _ensure(conds, "Suspended", "True", "JobSuspended", "Job suspended")
        else:
            conds, changed = _ensure(conds, "Suspended", "False", "JobResumed", "Job resumed")
            if changed:
                status["startTime"] = api.now()
        if not deleting:
            live = _manage(registry, job, live, succeeded, suspended)
    status["active"] = len(live)
    status["ready"] = sum(1 for p in live if pods.ready(p))
    status["succeeded"] = succeeded
    status["failed"] = failed
    for key in ("active", "succeeded", "failed"):
        if not status[key]:
            del status[key]
    status.setdefault("uncountedTerminatedPods", {})
    if conds:
        status["conditions"] = conds
    if status != old:
        api.update_status(registry, rt, job, status)
    return requeue


def _deadline_left(start: str, seconds: int) -> float:
    started = api.parse_time(start)
    if started is None:
        return float(seconds)
    return started.timestamp() + seconds - datetime.now(UTC).timestamp()


def _manage(registry: Registry, job: Object, live: list[Object], succeeded: int, suspended: bool) -> list[Object]:
    """Create or delete Pods so that the wanted number are active."""
    spec = job.get("spec") or {}
    pod_rt = api.resource("", "pods")
    if suspended:
        for pod in live:
            api.delete(registry, pod_rt, pod)
        return []
    parallelism = int(spec.get("parallelism", 1) or 0)
    completions = spec.get("completions")
    if completions is None:
        want = 0 if succeeded > 0 else parallelism
    else:
        want = max(min(int(completions) - succeeded, parallelism), 0)
    diff = want - len(live)
    namespace = job["metadata"]["namespace"]
    if diff > 0:
        indexed = spec.get("completionMode") == "Indexed"
        taken = {(p["metadata"].get("annotations") or {}).get(COMPLETION_INDEX) for p in live}
        free = (
            [i for i in range(int(completions or 0)) if str(i) not in taken][:diff] if indexed else [None] * diff
        )
        for index in free:
            pod = pods.from_template(spec.get("template"), job)
            if index is not None:
                _index_pod(pod, job, index)
            live.append(api.create(registry, pod_rt, namespace, pod))
    elif diff < 0:
        for pod in pods.rank_for_deletion(live)[:-diff]:
            api.delete(registry, pod_rt, pod)
            live = [p for p in live if p is not pod]
    return live


def _index_pod(pod: Object, job: Object, index: int) -> None:
    """An Indexed Job's Pod: the index as annotation and label, in its name
    and (unless set) its hostname."""
    name = job["metadata"]["name"]
    meta = pod["metadata"]
    meta["generateName"] = f"{name}-{index}-"
    meta.setdefault("annotations", {})[COMPLETION_INDEX] = str(index)
    meta.setdefault("labels", {})[COMPLETION_INDEX] = str(index)
    pod["spec"].setdefault("hostname", f"{name}-{index}")
