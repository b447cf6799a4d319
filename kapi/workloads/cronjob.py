"""The CronJob controller: Jobs on schedule, the active list, history limits.

After kube's ``pkg/controller/cronjob`` (``syncCronJob``, v2): the Jobs it
controls update ``status.active`` (finished ones leave it, missing ones too)
and ``lastSuccessfulTime``; the most recent schedule time since
``status.lastScheduleTime`` (else the creation time, bounded by
``startingDeadlineSeconds``) that has no Job yet gets one, named
``<cronjob>-<minutes since the epoch>``, unless the CronJob is suspended, the
time is past its starting deadline, or ``concurrencyPolicy`` forbids it
(``Forbid``: a Job still active; ``Replace`` deletes the active ones first).
Finished Jobs beyond ``successfulJobsHistoryLimit``/``failedJobsHistoryLimit``
are deleted, oldest first. The reconcile returns ``requeue_after`` at the
next schedule time: no polling.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from zoneinfo import ZoneInfoNotFoundError

from kapi.registry.store import Registry
from kapi.workloads import api, cron, ownership
from kapi.workloads.api import Object

__all__ = ["sync"]

#: Schedule times looked at between two syncs at most (kube warns past 100).
_MAX_MISSED = 100000


def _finished(job: Object) -> str | None:
    for c in (job.get("status") or {}).get("conditions") or ():
        if isinstance(c, dict) and c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return c["type"]
    return None


def _fmt(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def sync(namespace: str, name: str, registry: Registry) -> float | None:
    rt = api.resource("batch", "cronjobs")
    cj = api.get(registry, rt, namespace, name)
    if cj is None:
        return None
    if "deletionTimestamp" in cj["metadata"]:
        return None
    job_rt = api.resource("batch", "jobs")
    uid = cj["metadata"]["uid"]
    jobs = [
        j
        for j in api.owned(registry, job_rt, uid)
        if (ownership.controller_of(j["metadata"]) or {}).get("uid") == uid
    ]
    status = copy.deepcopy(cj.get("status") or {})
    _track_jobs(status, jobs)
    _cleanup(registry, job_rt, cj, jobs)
    requeue = None
    if not (cj.get("spec") or {}).get("suspend"):
        requeue = _schedule(registry, job_rt, cj, status, jobs)
    if not status.get("active"):
        status.pop("active", None)
    if status != (cj.get("status") or {}):
        api.update_status(registry, rt, cj, status)
    return requeue


def _track_jobs(status: Object, jobs: list[Object]) -> None:
    active = list(status.get("active") or ())
    uids = {j["metadata"]["uid"] for j in jobs}
    active_uids = {a.get("uid") for a in active}
    for job in jobs:
        done = _finished(job)
        job_uid = job["metadata"]["uid"]
        if done and job_uid in active_uids:
            active = [a for a in active if a.get("uid") != job_uid]
        if done == "Complete":
            completed = (job.get("status") or {}).get("completionTime")
            if completed and (not status.get("lastSuccessfulTime") or completed > status["lastSuccessfulTime"]):
                status["lastSuccessfulTime"] = completed
    status["active"] = [a for a in active if a.get("uid") in uids]


def _cleanup(registry: Registry, job_rt, cj: Object, jobs: list[Object]) -> None:
    spec = cj.get("spec") or {}
    for kind, key in (("Complete", "successfulJobsHistoryLimit"), ("Failed", "failedJobsHistoryLimit")):
        limit = spec.get(key)
        if limit is None:
            continue
        done = [j for j in jobs if _finished(j) == kind]
        if len(done) <= int(limit):
            continue
        done.sort(key=lambda j: ((j.get("status") or {}).get("startTime") or "", j["metadata"]["name"]))
        for job in done[: len(done) - int(limit)]:
            api.delete(registry, job_rt, job, "Background")


def _schedule(registry: Registry, job_rt, cj: Object, status: Object, jobs: list[Object]) -> float | None:
    spec = cj.get("spec") or {}
    try:
        schedule = cron.parse(str(spec.get("schedule") or ""), spec.get("timeZone"))
    except (cron.ScheduleError, ZoneInfoNotFoundError, ValueError):
        return None  # kube: an event, and no requeue until the CronJob changes
    now = datetime.now(UTC)
    earliest = api.parse_time(status.get("lastScheduleTime")) or api.parse_time(
        cj["metadata"].get("creationTimestamp")
    )
    deadline = spec.get("startingDeadlineSeconds")
    if deadline is not None and earliest is not None:
        earliest = max(earliest, datetime.fromtimestamp(now.timestamp() - int(deadline), UTC))
    scheduled = None
    t = earliest or now
    for _ in range(_MAX_MISSED):
        nxt = schedule.next(t)
        if nxt is None or nxt > now:
            break
        scheduled = t = nxt
    requeue = _until_next(schedule, now)
    if scheduled is None:
        return requeue
    if deadline is not None and scheduled.timestamp() + int(deadline) < now.timestamp():
        return requeue  # kube: MissSchedule
    job_name = f"{cj['metadata']['name']}-{int(scheduled.timestamp()) // 60}"
    if any(j["metadata"]["name"] == job_name for j in jobs) or status.get("lastScheduleTime") == _fmt(scheduled):
        return requeue
    policy = spec.get("concurrencyPolicy") or "Allow"
    active = status.get("active") or []
    if policy == "Forbid" and active:
        return requeue
    if policy == "Replace":
        for ref in active:
            job = next((j for j in jobs if j["metadata"]["uid"] == ref.get("uid")), None)
            if job is not None:
                api.delete(registry, job_rt, job, "Background")
        status["active"] = active = []
    created = api.create(registry, job_rt, cj["metadata"]["namespace"], _job_from_template(cj, job_name))
    meta = created["metadata"]
    status["active"] = [
        *active,
        {
            "kind": "Job",
            "namespace": meta["namespace"],
            "name": meta["name"],
            "uid": meta["uid"],
            "apiVersion": "batch/v1",
            "resourceVersion": meta["resourceVersion"],
        },
    ]
    status["lastScheduleTime"] = _fmt(scheduled)
    return requeue


def _until_next(schedule: cron.Schedule, now: datetime) -> float | None:
    nxt = schedule.next(now)
    if nxt is None:
        return None
    # kube adds 100ms so that the clock has surely passed the schedule time.
    return max((nxt - now).total_seconds(), 0.0) + 0.1


def _job_from_template(cj: Object, name: str) -> Object:
    template = (cj.get("spec") or {}).get("jobTemplate") or {}
    tmeta = template.get("metadata") or {}
    meta: dict = {"name": name, "ownerReferences": [ownership.controller_ref(cj)]}
    for key in ("labels", "annotations"):
        if tmeta.get(key):
            meta[key] = copy.deepcopy(tmeta[key])
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": copy.deepcopy(template.get("spec") or {})}
