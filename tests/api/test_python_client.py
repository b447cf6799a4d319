"""The official ``kubernetes`` Python client against kapi: CRUD and errors."""

from __future__ import annotations

import base64

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException


@pytest.fixture
def core(k8s_api_client) -> client.CoreV1Api:
    return client.CoreV1Api(k8s_api_client)


def test_configmap_crud(core, namespace):
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py", labels={"via": "python"}), data={"k": "v"})
    created = core.create_namespaced_config_map(namespace, body)
    assert created.metadata.uid and created.metadata.resource_version
    read = core.read_namespaced_config_map("py", namespace)
    assert read.data == {"k": "v"}
    read.data["k"] = "w"
    replaced = core.replace_namespaced_config_map("py", namespace, read)
    assert replaced.data == {"k": "w"}
    assert int(replaced.metadata.resource_version) > int(created.metadata.resource_version)
    listed = core.list_namespaced_config_map(namespace, label_selector="via=python")
    assert [i.metadata.name for i in listed.items] == ["py"]
    status = core.delete_namespaced_config_map("py", namespace)
    assert status["kind"] == "Status" and status["status"] == "Success"
    with pytest.raises(ApiException) as missing:
        core.read_namespaced_config_map("py", namespace)
    assert missing.value.status == 404


def test_errors_map_to_api_exceptions(core, namespace):
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="e"), data={})
    core.create_namespaced_config_map(namespace, body)
    with pytest.raises(ApiException) as exists:
        core.create_namespaced_config_map(namespace, body)
    assert exists.value.status == 409
    assert '"reason":"AlreadyExists"' in exists.value.body.replace(" ", "")
    stale = core.read_namespaced_config_map("e", namespace)
    core.replace_namespaced_config_map("e", namespace, stale)
    stale.data = {"changed": "yes"}
    core.replace_namespaced_config_map("e", namespace, stale)
    stale.data = {"changed": "again"}
    with pytest.raises(ApiException) as conflict:
        core.replace_namespaced_config_map("e", namespace, stale)
    assert conflict.value.status == 409
    with pytest.raises(ApiException) as invalid:
        core.create_namespaced_config_map(namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="-bad-")))
    assert invalid.value.status == 422


def test_secrets_and_service_accounts(core, namespace):
    secret = client.V1Secret(metadata=client.V1ObjectMeta(name="pw"), string_data={"password": "hunter2"})
    created = core.create_namespaced_secret(namespace, secret)
    assert base64.b64decode(created.data["password"]) == b"hunter2"
    assert created.type == "Opaque"
    sa = core.create_namespaced_service_account(namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="robot")))
    assert sa.metadata.name == "robot"
    assert "robot" in [s.metadata.name for s in core.list_namespaced_service_account(namespace).items]


def test_namespaces_and_all_namespace_lists(core, namespace):
    ns = core.read_namespace(namespace)
    assert ns.status.phase == "Active"
    assert ns.metadata.labels["kubernetes.io/metadata.name"] == namespace
    names = [n.metadata.name for n in core.list_namespace().items]
    assert {"default", "kube-system", "kube-public", namespace} <= set(names)
    core.create_namespaced_config_map(namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="all", labels={"probe": namespace})))
    everywhere = core.list_config_map_for_all_namespaces(label_selector=f"probe={namespace}")
    assert [(i.metadata.namespace, i.metadata.name) for i in everywhere.items] == [(namespace, "all")]


def test_leases_in_coordination_group(k8s_api_client, namespace):
    api = client.CoordinationV1Api(k8s_api_client)
    lease = client.V1Lease(metadata=client.V1ObjectMeta(name="leader"), spec=client.V1LeaseSpec(holder_identity="me", lease_duration_seconds=15))
    created = api.create_namespaced_lease(namespace, lease)
    assert created.spec.holder_identity == "me"
    created.spec.holder_identity = "you"
    assert api.replace_namespaced_lease("leader", namespace, created).spec.holder_identity == "you"
