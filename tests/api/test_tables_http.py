"""Tables as kube's printers fill them, where clients can tell.

kube's printers write some booleans as words (``printBoolPtr``: ``True``,
``False``, ``<unset>``), so ``kubectl get cronjobs`` shows ``SUSPEND False``,
not ``false``.
"""

from __future__ import annotations

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def _cronjob(name: str, **spec) -> dict:
    template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {"template": template}}, **spec},
    }


def test_cronjob_suspend_is_printed_as_kube_prints_it(api, namespace, kapi_server):
    """SUSPEND reads ``False`` (defaulted) and ``True``, in the Table and in kubectl."""
    base = f"/apis/batch/v1/namespaces/{namespace}/cronjobs"
    assert api.post(base, _cronjob("running")).status_code == 201
    assert api.post(base, _cronjob("paused", suspend=True)).status_code == 201
    table = api.get(base, headers={"Accept": TABLE}).json()
    columns = [c["name"] for c in table["columnDefinitions"]]
    assert columns[:6] == ["Name", "Schedule", "Timezone", "Suspend", "Active", "Last Schedule"]
    suspend = {row["cells"][0]: row["cells"][3] for row in table["rows"]}
    assert suspend == {"paused": "True", "running": "False"}
    out = kapi_server.kubectl("get", "cronjobs", "-n", namespace).stdout.splitlines()
    assert out[0].split()[:4] == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND"]
    rows = {line.split()[0]: line.split() for line in out[1:]}
    # NAME, SCHEDULE (five fields), TIMEZONE, SUSPEND
    assert rows["running"][7] == "False" and rows["paused"][7] == "True"
