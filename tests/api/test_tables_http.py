"""Tables as kube's printers fill them, where clients can tell.

kube's printers write some booleans as words (``printBoolPtr``: ``True``,
``False``, ``<unset>``), so ``kubectl get cronjobs`` shows ``SUSPEND False``,
not ``false``.
"""

from __future__ import annotations

import uuid

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


def _table(api, path: str) -> tuple[list[str], dict[str, list]]:
    table = api.get(path, headers={"Accept": TABLE}).json()
    return [c["name"] for c in table["columnDefinitions"]], {r["cells"][0]: r["cells"] for r in table["rows"]}


def test_columns_of_kinds_that_only_print(api, namespace):
    """LimitRange, PodTemplate, ControllerRevision, EndpointSlice, RuntimeClass
    and webhook configurations print kube's columns and cells."""
    ns = f"/api/v1/namespaces/{namespace}"
    limit = {"metadata": {"name": "lr"}, "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]}}
    assert api.post(f"{ns}/limitranges", limit).status_code == 201
    columns, rows = _table(api, f"{ns}/limitranges")
    assert columns == ["Name", "Created At"] and rows["lr"][1].endswith("Z")

    template = {
        "metadata": {"name": "pt"},
        "template": {
            "metadata": {"labels": {"b": "2", "a": "1"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}, {"name": "d", "image": "busybox"}]},
        },
    }
    assert api.post(f"{ns}/podtemplates", template).status_code == 201
    columns, rows = _table(api, f"{ns}/podtemplates")
    assert columns == ["Name", "Containers", "Images", "Pod Labels"]
    assert rows["pt"] == ["pt", "c,d", "nginx,busybox", "a=1,b=2"]

    apps = f"/apis/apps/v1/namespaces/{namespace}"
    owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "u-1", "controller": True}
    revision = {"metadata": {"name": "web-1", "ownerReferences": [owner]}, "data": {"spec": {}}, "revision": 3}
    assert api.post(f"{apps}/controllerrevisions", revision).status_code == 201
    columns, rows = _table(api, f"{apps}/controllerrevisions")
    assert columns == ["Name", "Controller", "Revision", "Age"]
    assert rows["web-1"][1:3] == ["statefulset.apps/web", 3]

    slices = f"/apis/discovery.k8s.io/v1/namespaces/{namespace}/endpointslices"
    endpoints = [{"addresses": [f"10.0.0.{i}"]} for i in range(5)]
    ports = [{"name": "http", "port": 80, "protocol": "TCP"}, {"name": "named", "protocol": "TCP"}]
    body = {"metadata": {"name": "es"}, "addressType": "IPv4", "endpoints": endpoints, "ports": ports}
    created = api.post(slices, body)
    assert created.status_code == 201, created.text
    columns, rows = _table(api, slices)
    assert columns == ["Name", "AddressType", "Ports", "Endpoints", "Age"]
    assert rows["es"][1:4] == ["IPv4", "80,named", "10.0.0.0,10.0.0.1,10.0.0.2 + 2 more..."]


def test_cluster_scoped_print_columns(api):
    """RuntimeClass HANDLER; a webhook configuration's WEBHOOKS count."""
    name = "rc-" + uuid.uuid4().hex[:8]
    created = api.post("/apis/node.k8s.io/v1/runtimeclasses", {"metadata": {"name": name}, "handler": "runc"})
    assert created.status_code == 201, created.text
    columns, rows = _table(api, "/apis/node.k8s.io/v1/runtimeclasses")
    assert columns == ["Name", "Handler", "Age"] and rows[name][1] == "runc"
    hook = {
        "name": "h.example.com",
        "clientConfig": {"url": "https://example.com/hook"},
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }
    path = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
    created = api.post(path, {"metadata": {"name": name}, "webhooks": [hook, {**hook, "name": "i.example.com"}]})
    assert created.status_code == 201, created.text
    columns, rows = _table(api, path)
    assert columns == ["Name", "Webhooks", "Age"] and rows[name][1] == 2
    # kube's webhook defaults came with it.
    webhook = created.json()["webhooks"][0]
    assert (webhook["failurePolicy"], webhook["matchPolicy"], webhook["timeoutSeconds"]) == ("Fail", "Equivalent", 10)
    assert webhook["namespaceSelector"] == {} and webhook["objectSelector"] == {}


def test_table_of_a_create_only_kind_is_not_acceptable(api):
    """A review holds no metadata to show: asking for it as a Table is 406 (kube's
    endpoints without a TableConvertor), while JSON next in the list still wins."""
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"nonResourceAttributes": {"path": "/", "verb": "get"}},
    }
    path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
    refused = api.post(path, review, headers={"Accept": TABLE})
    assert refused.status_code == 406, refused.text
    assert refused.json()["reason"] == "NotAcceptable"
    answered = api.post(path, review, headers={"Accept": f"{TABLE}, application/json"})
    assert answered.status_code == 201 and answered.json()["status"]["allowed"] is True
