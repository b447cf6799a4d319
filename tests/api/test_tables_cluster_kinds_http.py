"""Table columns of the cluster's plumbing kinds, as kube's printers fill them.

One case per kind: the object (and the status a controller would write), the
column names and the cells of its row, as ``kubectl get`` shows them from
kube-apiserver (``pkg/printers/internalversion/printers.go``).
"""

from __future__ import annotations

import time
import uuid

import pytest

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
AGE = "Age"


def _name() -> str:
    return "p-" + uuid.uuid4().hex[:8]


# (collection path, namespaced, body, status, columns, cells after the name
#  (AGE, whose value depends on the clock, is left out))
CASES = {
    "resourcequotas": (
        "/api/v1/namespaces/{ns}/resourcequotas", {"spec": {"hard": {"pods": "10", "limits.cpu": "2"}}},
        {"hard": {"pods": "10", "limits.cpu": "2", "requests.memory": "1Gi"},
         "used": {"pods": "3", "limits.cpu": "500m"}},
        ["Name", "Request", "Limit", AGE],
        ["pods: 3/10, requests.memory: 0/1Gi", "limits.cpu: 500m/2"],
    ),
    "csidrivers": (
        "/apis/storage.k8s.io/v1/csidrivers",
        {"spec": {"podInfoOnMount": True, "volumeLifecycleModes": ["Persistent", "Ephemeral"],
                  "tokenRequests": [{"audience": "vault"}, {"audience": "gcp"}]}},
        None,
        ["Name", "AttachRequired", "PodInfoOnMount", "StorageCapacity", "TokenRequests",
         "RequiresRepublish", "Modes", AGE],
        [True, True, False, "vault,gcp", False, "Persistent,Ephemeral"],
    ),
    "csinodes": (
        "/apis/storage.k8s.io/v1/csinodes",
        {"spec": {"drivers": [{"name": "a.example.com", "nodeID": "n1"},
                              {"name": "b.example.com", "nodeID": "n1"}]}},
        None, ["Name", "Drivers", AGE], [2],
    ),
    "volumeattachments": (
        "/apis/storage.k8s.io/v1/volumeattachments",
        {"spec": {"attacher": "csi.example.com", "nodeName": "node-1",
                  "source": {"persistentVolumeName": "pv-1"}}},
        {"attached": True},
        ["Name", "Attacher", "PV", "Node", "Attached", AGE],
        ["csi.example.com", "pv-1", "node-1", True],
    ),
    "flowschemas": (
        "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
        {"spec": {"priorityLevelConfiguration": {"name": "workload-low"}, "matchingPrecedence": 500,
                  "distinguisherMethod": {"type": "ByUser"}}},
        {"conditions": [{"type": "Dangling", "status": "False", "reason": "Found"}]},
        ["Name", "PriorityLevel", "MatchingPrecedence", "DistinguisherMethod", AGE, "MissingPL"],
        ["workload-low", 500, "ByUser", "False"],
    ),
    "prioritylevelconfigurations": (
        "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
        {"spec": {"type": "Limited", "limited": {
            "nominalConcurrencyShares": 30,
            "limitResponse": {"type": "Queue", "queuing": {"queues": 64, "handSize": 6,
                                                           "queueLengthLimit": 50}}}}},
        None,
        ["Name", "Type", "NominalConcurrencyShares", "Queues", "HandSize", "QueueLengthLimit", AGE],
        ["Limited", 30, 64, 6, 50],
    ),
    "validatingadmissionpolicies": (
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
        {"spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                  "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                                                          "operations": ["CREATE"],
                                                          "resources": ["deployments"]}]},
                  "validations": [{"expression": "object.spec.replicas <= 5"},
                                  {"expression": "true"}]}},
        None, ["Name", "Validations", "ParamKind", AGE], [2, "v1/ConfigMap"],
    ),
    "validatingadmissionpolicybindings": (
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
        {"spec": {"policyName": "replica-limit", "validationActions": ["Deny"],
                  "paramRef": {"name": "limits", "parameterNotFoundAction": "Deny"}}},
        None, ["Name", "PolicyName", "ParamRef", AGE], ["replica-limit", "*/limits"],
    ),
    "apiservices": (
        "/apis/apiregistration.k8s.io/v1/apiservices",
        None,
        {"conditions": [{"type": "Available", "status": "False", "reason": "MissingEndpoints",
                         "lastTransitionTime": "2026-01-01T00:00:00Z"}]},
        ["Name", "Service", "Available", AGE],
        ["monitoring/metrics", "False (MissingEndpoints)"],
    ),
    "ipaddresses": (
        "/apis/networking.k8s.io/v1/ipaddresses",
        None, None, ["Name", "ParentRef"], ["services/default/web"],
    ),
    "servicecidrs": (
        "/apis/networking.k8s.io/v1/servicecidrs",
        {"spec": {"cidrs": ["10.96.0.0/16", "fd00:10:96::/112"]}},
        None, ["Name", "CIDRs", AGE], ["10.96.0.0/16,fd00:10:96::/112"],
    ),
    "resourceclaims": (
        "/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims",
        {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}},
        None, ["Name", "State", AGE], ["pending"],
    ),
    "resourceslices": (
        "/apis/resource.k8s.io/v1/resourceslices",
        {"spec": {"driver": "gpu.example.com", "nodeName": "node-1",
                  "pool": {"name": "pool-a", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0"}]}},
        None, ["Name", "Node", "Driver", "Pool", AGE], ["node-1", "gpu.example.com", "pool-a"],
    ),
}


def _body(resource: str, name: str, spec: dict | None) -> dict:
    if resource == "apiservices":
        name = "v1." + name + ".example.com"
        return {"metadata": {"name": name}, "spec": {
            "group": name.split(".", 1)[1], "version": "v1", "groupPriorityMinimum": 100,
            "versionPriority": 10, "service": {"namespace": "monitoring", "name": "metrics"}}}
    if resource == "ipaddresses":
        return {"metadata": {"name": "10.96.7." + str(int(name[2:], 16) % 250 + 1)}, "spec": {
            "parentRef": {"group": "", "resource": "services", "namespace": "default", "name": "web"}}}
    return {"metadata": {"name": name}, **(spec or {})}


@pytest.mark.parametrize("resource", sorted(CASES))
def test_kind_prints_kubes_columns(api, namespace, resource):
    path, spec, status, columns, cells = CASES[resource]
    path = path.format(ns=namespace)
    body = _body(resource, _name(), spec)
    created = api.post(path, body)
    assert created.status_code == 201, created.text
    name = created.json()["metadata"]["name"]
    if status is not None:
        obj = created.json()
        written = api.put(f"{path}/{name}/status", {**obj, "status": status})
        assert written.status_code == 200, written.text
    try:
        table = api.get(f"{path}/{name}", headers={"Accept": TABLE})
        assert table.status_code == 200, table.text
        table = table.json()
        assert [c["name"] for c in table["columnDefinitions"]] == columns
        row = table["rows"][0]["cells"]
        assert row[0] == name
        without_age = [cell for column, cell in zip(columns, row, strict=True) if column != AGE]
        assert without_age[1:] == cells
        if resource == "apiservices":
            assert row[-1] == ""  # kube's aggregator leaves AGE blank
    finally:
        api.delete(f"{path}/{name}")


def test_kubectl_shows_quota_requests_and_limits(api, namespace, kapi_server):
    """What ``kubectl get quota`` prints: NAME, REQUEST, LIMIT, AGE."""
    path = f"/api/v1/namespaces/{namespace}/resourcequotas"
    created = api.post(path, {"metadata": {"name": "q"}, "spec": {"hard": {"pods": "4"}}})
    assert created.status_code == 201, created.text
    # The quota controller fills the status; one Pod is counted.
    deadline = time.monotonic() + 30
    while "used" not in (api.get(f"{path}/q").json().get("status") or {}):
        assert time.monotonic() < deadline, "quota status never computed"
        time.sleep(0.05)
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    assert api.post(f"/api/v1/namespaces/{namespace}/pods", pod).status_code == 201
    while True:
        out = kapi_server.kubectl("get", "quota", "-n", namespace).stdout.splitlines()
        if out[1].split()[:3] == ["q", "pods:", "1/4"] or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert out[0].split() == ["NAME", "REQUEST", "LIMIT", "AGE"]
    assert out[1].split()[:3] == ["q", "pods:", "1/4"]
