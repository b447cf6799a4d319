"""Every built-in kind is stored, read, listed as a Table and deleted through the
generic registry; the meta-test keeps this suite in step with the catalog.

``MINIMAL`` holds a smallest valid object per kind; ``EXEMPT`` names kinds
covered by their own suites, with the reason.
"""

from __future__ import annotations

import os

import django
import pytest

# The built-in types read the catalog's settings when imported: a module run
# alone (the first to import kapi) sets Django up itself.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
django.setup()

from kapi.kinds.builtin import BUILTIN_TYPES  # noqa: E402

_POD_SPEC = {"containers": [{"name": "c", "image": "nginx:1.27"}]}
_TEMPLATE = {"metadata": {"labels": {"app": "x"}}, "spec": _POD_SPEC}
_SELECTOR = {"matchLabels": {"app": "x"}}
_RULE = {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}
_REF = {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"}

#: (group, version, kind) -> body without apiVersion/kind/metadata
MINIMAL: dict[tuple[str, str, str], dict] = {
    ("", "v1", "ConfigMap"): {"data": {"a": "b"}},
    ("", "v1", "Secret"): {"data": {"a": "Yg=="}},
    ("", "v1", "ServiceAccount"): {},
    ("", "v1", "Event"): {
        "involvedObject": {"kind": "Pod", "name": "p"},
        "reason": "R",
    },
    ("events.k8s.io", "v1", "Event"): {
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "a/b",
        "reportingInstance": "i",
        "action": "A",
        "reason": "R",
        "regarding": {"kind": "Pod", "name": "p"},
        "type": "Normal",
    },
    ("coordination.k8s.io", "v1", "Lease"): {"spec": {"holderIdentity": "me"}},
    ("", "v1", "Endpoints"): {
        "subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80}]}]
    },
    ("", "v1", "LimitRange"): {
        "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]}
    },
    ("", "v1", "Node"): {"spec": {}},
    ("", "v1", "PersistentVolumeClaim"): {
        "spec": {
            "accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}},
        }
    },
    ("", "v1", "PersistentVolume"): {
        "spec": {
            "capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/tmp"},
        }
    },
    ("", "v1", "Pod"): {"spec": _POD_SPEC},
    ("", "v1", "PodTemplate"): {"template": _TEMPLATE},
    ("", "v1", "ReplicationController"): {
        "spec": {"selector": {"app": "x"}, "template": _TEMPLATE}
    },
    ("", "v1", "ResourceQuota"): {"spec": {"hard": {"pods": "10"}}},
    ("", "v1", "Service"): {"spec": {"ports": [{"port": 80}]}},
    ("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration"): {},
    ("admissionregistration.k8s.io", "v1", "ValidatingWebhookConfiguration"): {},
    ("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicy"): {
        "spec": {"validations": [{"expression": "true"}]}
    },
    ("admissionregistration.k8s.io", "v1", "ValidatingAdmissionPolicyBinding"): {
        "spec": {"policyName": "p", "validationActions": ["Deny"]}
    },
    ("apiregistration.k8s.io", "v1", "APIService"): {
        "spec": {
            "group": "x.io",
            "version": "v1",
            "groupPriorityMinimum": 1,
            "versionPriority": 1,
        }
    },
    ("apps", "v1", "ControllerRevision"): {"revision": 1, "data": {"spec": {"a": 1}}},
    ("apps", "v1", "DaemonSet"): {
        "spec": {"selector": _SELECTOR, "template": _TEMPLATE}
    },
    ("apps", "v1", "Deployment"): {
        "spec": {"selector": _SELECTOR, "template": _TEMPLATE}
    },
    ("apps", "v1", "ReplicaSet"): {
        "spec": {"selector": _SELECTOR, "template": _TEMPLATE}
    },
    ("apps", "v1", "StatefulSet"): {
        "spec": {"selector": _SELECTOR, "template": _TEMPLATE, "serviceName": "s"}
    },
    ("autoscaling", "v1", "HorizontalPodAutoscaler"): {
        "spec": {
            "scaleTargetRef": {"kind": "Deployment", "name": "d"},
            "maxReplicas": 3,
            "targetCPUUtilizationPercentage": 50,
        }
    },
    ("autoscaling", "v2", "HorizontalPodAutoscaler"): {
        "spec": {
            "scaleTargetRef": {"kind": "Deployment", "name": "d"},
            "maxReplicas": 3,
        }
    },
    ("batch", "v1", "CronJob"): {
        "spec": {
            "schedule": "*/5 * * * *",
            "jobTemplate": {
                "spec": {"template": {"spec": {**_POD_SPEC, "restartPolicy": "Never"}}}
            },
        }
    },
    ("batch", "v1", "Job"): {
        "spec": {"template": {"spec": {**_POD_SPEC, "restartPolicy": "Never"}}}
    },
    ("certificates.k8s.io", "v1", "CertificateSigningRequest"): {
        "spec": {
            "request": "Y3Ny",
            "signerName": "example.com/s",
            "usages": ["client auth"],
        }
    },
    ("discovery.k8s.io", "v1", "EndpointSlice"): {
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.0.0.1"]}],
    },
    ("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema"): {
        "spec": {"priorityLevelConfiguration": {"name": "global-default"}}
    },
    ("flowcontrol.apiserver.k8s.io", "v1", "PriorityLevelConfiguration"): {
        "spec": {"type": "Exempt", "exempt": {}}
    },
    ("networking.k8s.io", "v1", "IngressClass"): {
        "spec": {"controller": "example.com/ingress"}
    },
    ("networking.k8s.io", "v1", "Ingress"): {
        "spec": {"defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}}
    },
    ("networking.k8s.io", "v1", "IPAddress"): {
        "spec": {
            "parentRef": {"resource": "services", "name": "s", "namespace": "default"}
        }
    },
    ("networking.k8s.io", "v1", "NetworkPolicy"): {"spec": {"podSelector": {}}},
    ("networking.k8s.io", "v1", "ServiceCIDR"): {"spec": {"cidrs": ["10.100.0.0/16"]}},
    ("node.k8s.io", "v1", "RuntimeClass"): {"handler": "runc"},
    ("policy", "v1", "PodDisruptionBudget"): {
        "spec": {"minAvailable": 1, "selector": _SELECTOR}
    },
    ("rbac.authorization.k8s.io", "v1", "ClusterRole"): {"rules": [_RULE]},
    ("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding"): {
        "roleRef": _REF,
        "subjects": [{"kind": "User", "name": "u"}],
    },
    ("rbac.authorization.k8s.io", "v1", "Role"): {"rules": [_RULE]},
    ("rbac.authorization.k8s.io", "v1", "RoleBinding"): {"roleRef": _REF},
    ("resource.k8s.io", "v1", "DeviceClass"): {"spec": {}},
    ("resource.k8s.io", "v1", "ResourceClaim"): {"spec": {}},
    ("resource.k8s.io", "v1", "ResourceClaimTemplate"): {"spec": {"spec": {}}},
    ("resource.k8s.io", "v1", "ResourceSlice"): {
        "spec": {
            "driver": "d.example.com",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "allNodes": True,
        }
    },
    ("scheduling.k8s.io", "v1", "PriorityClass"): {"value": 100},
    ("storage.k8s.io", "v1", "CSIDriver"): {"spec": {}},
    ("storage.k8s.io", "v1", "CSINode"): {"spec": {"drivers": []}},
    ("storage.k8s.io", "v1", "CSIStorageCapacity"): {"storageClassName": "sc"},
    ("storage.k8s.io", "v1", "StorageClass"): {"provisioner": "example.com/p"},
    ("storage.k8s.io", "v1", "VolumeAttachment"): {
        "spec": {
            "attacher": "a",
            "nodeName": "n",
            "source": {"persistentVolumeName": "pv"},
        }
    },
    ("storage.k8s.io", "v1", "VolumeAttributesClass"): {"driverName": "d.example.com"},
}

EXEMPT = {
    ("", "v1", "Namespace"): "tests/api/test_crud_http.py and every namespace fixture",
    (
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
    ): "tests/api/test_crd_http.py",
}


def _gvk(rt) -> tuple[str, str, str]:
    return (rt.group, rt.version, rt.kind)


def test_every_builtin_kind_has_a_suite_or_exemption():
    """Each registered built-in resource is exercised here or exempted with a reason."""
    missing = [
        _gvk(rt)
        for rt in BUILTIN_TYPES
        if _gvk(rt) not in MINIMAL and _gvk(rt) not in EXEMPT
    ]
    assert not missing, f"add a MINIMAL object or an EXEMPT reason for {missing}"


@pytest.mark.parametrize(
    "rt",
    [rt for rt in BUILTIN_TYPES if _gvk(rt) in MINIMAL],
    ids=lambda rt: f"{rt.plural}.{rt.group or 'core'}",
)
def test_create_get_table_delete(api, namespace, rt):
    """A minimal valid object is created (201), read back, listed as a Table with
    a Name column, and deleted."""
    base = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    collection = (
        f"{base}/namespaces/{namespace}/{rt.plural}"
        if rt.namespaced
        else f"{base}/{rt.plural}"
    )
    name = f"x-{namespace}"
    body = {
        "apiVersion": rt.api_version,
        "kind": rt.kind,
        "metadata": {"name": name},
        **MINIMAL[_gvk(rt)],
    }
    created = api.post(collection, body)
    assert created.status_code == 201, created.text
    got = api.get(f"{collection}/{name}")
    assert got.status_code == 200
    assert got.json()["kind"] == rt.kind
    table = api.get(
        collection, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}
    )
    assert table.status_code == 200, table.text
    doc = table.json()
    column = [c["name"] for c in doc["columnDefinitions"]].index("Name")
    names = [row["cells"][column].split(" ")[0] for row in doc["rows"]]
    assert name in names
    assert all(
        len(row["cells"]) == len(doc["columnDefinitions"]) for row in doc["rows"]
    )
    assert api.delete(f"{collection}/{name}").status_code == 200
