"""Jobs make Pending Pods (parallelism), fail at their active deadline and
stop when suspended; CronJobs make Jobs on schedule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.workloads.conftest import container, wait_for

MERGE = {"Content-Type": "application/merge-patch+json"}


def _job(name: str, **spec) -> dict:
    return {"metadata": {"name": name}, "spec": {
        "template": {"spec": {"restartPolicy": "Never", "containers": [container("busybox")]}}, **spec}}


def _pods(api, namespace: str, job: str) -> list[dict]:
    return api.get(f"/api/v1/namespaces/{namespace}/pods",
                   params={"labelSelector": f"job-name={job}"}).json()["items"]


def test_job_pods_deadline_and_suspend(api, namespace):
    """parallelism Pods with kube's generated selector and labels; status
    active/ready/startTime; the deadline fails the Job (DeadlineExceeded) and
    deletes its Pods; suspending deletes them too."""
    base = f"/apis/batch/v1/namespaces/{namespace}/jobs"
    job = api.post(base, _job("work", parallelism=2, completions=5)).json()
    uid = job["metadata"]["uid"]
    assert job["spec"]["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    pods = wait_for(lambda: len(p := _pods(api, namespace, "work")) == 2 and p, what="2 pods")
    assert pods[0]["metadata"]["labels"]["controller-uid"] == uid
    assert pods[0]["metadata"]["ownerReferences"][0]["kind"] == "Job"
    status = wait_for(lambda: (s := api.get(f"{base}/work").json().get("status", {})).get("active") == 2 and s,
                      what="status")
    assert status["ready"] == 0 and status["startTime"]

    r = api.request("PATCH", f"{base}/work", headers=MERGE, json={"spec": {"suspend": True}})
    assert r.status_code == 200, r.text

    def suspended():
        conds = api.get(f"{base}/work").json().get("status", {}).get("conditions", [])
        return not _pods(api, namespace, "work") and any(
            c["type"] == "Suspended" and c["status"] == "True" and c["reason"] == "JobSuspended" for c in conds)

    wait_for(suspended, what="suspended")

    api.post(base, _job("late", activeDeadlineSeconds=2))

    def failed():
        status = api.get(f"{base}/late").json().get("status", {})
        return [c for c in status.get("conditions", []) if c["type"] == "Failed"]

    cond = wait_for(failed, timeout=20, what="deadline exceeded")[0]
    assert (cond["status"], cond["reason"], cond["message"]) == (
        "True", "DeadlineExceeded", "Job was active longer than specified deadline")
    wait_for(lambda: not _pods(api, namespace, "late"), what="pods of the failed job deleted")


def test_cronjob_runs_a_missed_schedule(api, namespace):
    """A CronJob whose last schedule time is two minutes back runs the most
    recent schedule time at once: a Job <cronjob>-<minutes>, in status.active."""
    base = f"/apis/batch/v1/namespaces/{namespace}/cronjobs"
    cj = api.post(base, {"metadata": {"name": "tick"}, "spec": {
        "schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
            "restartPolicy": "OnFailure", "containers": [container("busybox")]}}}}}}).json()
    back = (datetime.now(UTC) - timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    r = api.request("PATCH", f"{base}/tick/status", headers=MERGE,
                    json={"status": {"lastScheduleTime": back}})
    assert r.status_code == 200, r.text

    def scheduled():
        status = api.get(f"{base}/tick").json().get("status", {})
        return status.get("lastScheduleTime", back) != back and status.get("active") and status

    status = wait_for(scheduled, what="a job scheduled")
    minute = int(datetime.fromisoformat(status["lastScheduleTime"].replace("Z", "+00:00")).timestamp()) // 60
    job = api.get(f"/apis/batch/v1/namespaces/{namespace}/jobs/tick-{minute}").json()
    assert job["metadata"]["ownerReferences"][0]["uid"] == cj["metadata"]["uid"]
    assert status["active"][0]["name"] == f"tick-{minute}"
