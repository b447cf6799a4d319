"""What the control plane makes by itself: ``default/kubernetes`` (Service,
Endpoints, EndpointSlice) and ``kube-root-ca.crt`` in every namespace, each put
back when deleted or edited (kube-apiserver's bootstrap controller,
kube-controller-manager's root-CA publisher)."""

from __future__ import annotations

import json
import uuid
from urllib.parse import urlsplit

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from tests.lifecycle.conftest import wait_for

CA_CM = "kube-root-ca.crt"
DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal "
    "endpoints such as the internal service IP or kubernetes.default.svc. No other usage is "
    "guaranteed across distributions of Kubernetes clusters."
)


@pytest.fixture(scope="module")
def core(k8s_api_client) -> client.CoreV1Api:
    return client.CoreV1Api(k8s_api_client)


@pytest.fixture
def namespace(core) -> str:
    name = f"cp-{uuid.uuid4().hex[:8]}"
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    yield name
    try:
        core.delete_namespace(name)
    except ApiException:
        pass


def _read_cm(core, namespace):
    try:
        return core.read_namespaced_config_map(CA_CM, namespace)
    except ApiException as exc:
        assert exc.status == 404, exc.body
        return None


def _server_port(kapi_server) -> int:
    return urlsplit(kapi_server.url).port


def test_kubernetes_service_names_the_api_server(kapi_server, core):
    """Made by the workers soon after start (a client may ask a moment before)."""
    port = _server_port(kapi_server)
    for read in (core.read_namespaced_service, core.read_namespaced_endpoints):
        wait_for(lambda read=read: _get(read, "kubernetes", "default"), what="default/kubernetes")
    svc = json.loads(kapi_server.kubectl("get", "service", "kubernetes", "-n", "default", "-o", "json").stdout)
    assert svc["spec"]["clusterIP"] == "10.96.0.1"
    assert svc["spec"]["type"] == "ClusterIP"
    assert "selector" not in svc["spec"]
    assert [(p["name"], p["port"], p["targetPort"], p["protocol"]) for p in svc["spec"]["ports"]] == [
        ("https", 443, port, "TCP")
    ]
    assert svc["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    endpoints = kapi_server.kubectl("get", "endpoints", "kubernetes", "-n", "default", "-o", "json").stdout
    assert json.loads(endpoints)["subsets"] == [
        {"addresses": [{"ip": "127.0.0.1"}], "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}
    ]
    slice_ = json.loads(
        kapi_server.kubectl(
            "get", "endpointslices", "-n", "default", "-l", "kubernetes.io/service-name=kubernetes", "-o", "json"
        ).stdout
    )["items"]
    assert [(s["addressType"], s["endpoints"][0]["addresses"], s["ports"][0]["port"]) for s in slice_] == [
        ("IPv4", ["127.0.0.1"], port)
    ]


def test_kubernetes_service_comes_back(kapi_server, core):
    """Deleted, it is made again with the same address; edited ports and
    endpoints are put back; what kube leaves alone (a label added) stays."""
    port = _server_port(kapi_server)
    core.delete_namespaced_service("kubernetes", "default")
    svc = wait_for(lambda: _get(core.read_namespaced_service, "kubernetes", "default"), what="Service back")
    assert svc.spec.cluster_ip == "10.96.0.1"
    kapi_server.kubectl(
        "patch", "service", "kubernetes", "-n", "default", "--type", "json", "-p",
        '[{"op": "add", "path": "/metadata/labels/team", "value": "x"},'
        ' {"op": "replace", "path": "/spec/ports/0/port", "value": 8443}]',
    )
    wait_for(
        lambda: [p.port for p in core.read_namespaced_service("kubernetes", "default").spec.ports] == [443],
        what="ports put back",
    )
    svc = core.read_namespaced_service("kubernetes", "default")
    assert svc.spec.ports[0].target_port == port
    assert svc.metadata.labels["team"] == "x"
    core.patch_namespaced_endpoints(
        "kubernetes", "default", {"subsets": [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 1}]}]}
    )
    wait_for(
        lambda: core.read_namespaced_endpoints("kubernetes", "default").subsets[0].addresses[0].ip == "127.0.0.1",
        what="endpoints put back",
    )
    discovery = client.DiscoveryV1Api(core.api_client)
    discovery.delete_namespaced_endpoint_slice("kubernetes", "default")
    wait_for(lambda: _get(discovery.read_namespaced_endpoint_slice, "kubernetes", "default"), what="slice back")


def _get(read, name, namespace):
    try:
        return read(name, namespace)
    except ApiException as exc:
        assert exc.status == 404, exc.body
        return None


def test_every_namespace_gets_the_root_ca(kapi_server, core, namespace):
    cm = wait_for(lambda: _read_cm(core, namespace), what="kube-root-ca.crt")
    assert cm.data == {"ca.crt": kapi_server.ca_path.read_text()}
    assert cm.metadata.annotations == {"kubernetes.io/description": DESCRIPTION}
    for system in ("default", "kube-system", "kube-public"):
        assert wait_for(lambda system=system: _read_cm(core, system), what=system).data == cm.data


def test_root_ca_put_back_when_deleted_or_edited(kapi_server, core, namespace):
    """The data and the annotation come back; what else an editor added stays,
    as kube-controller-manager does."""
    ca = kapi_server.ca_path.read_text()
    first = wait_for(lambda: _read_cm(core, namespace), what="kube-root-ca.crt")
    core.delete_namespaced_config_map(CA_CM, namespace)
    again = wait_for(lambda: _read_cm(core, namespace), what="recreated")
    assert again.metadata.uid != first.metadata.uid
    core.patch_namespaced_config_map(
        CA_CM, namespace,
        {"metadata": {"labels": {"mine": "yes"}, "annotations": {"kubernetes.io/description": None}},
         "data": {"ca.crt": "not a CA", "extra": "x"}, "binaryData": {"b": "AAE="}},
    )
    mended = wait_for(
        lambda: (c := _read_cm(core, namespace)) and c.data == {"ca.crt": ca} and c,
        what="data put back",
    )
    assert mended.metadata.annotations["kubernetes.io/description"] == DESCRIPTION
    assert mended.metadata.labels == {"mine": "yes"}
    assert mended.binary_data == {"b": "AAE="}


def test_tenant_edits_cannot_keep_a_false_ca(kapi_server, make_user, namespace):
    """A user with edit rights in the namespace may change the ConfigMap (as in
    kube), but the publisher puts the real CA back: pods reading it are not
    pointed at the tenant's CA."""
    user = make_user("cp-tenant")
    kapi_server.kubectl(
        "create", "rolebinding", "edit", "--clusterrole=edit", f"--user={user.name}", "-n", namespace
    )
    wait_for(lambda: user.can_i("update", "configmaps", "-n", namespace), what="rights")
    out = user.kubectl(
        "create", "configmap", CA_CM, "-n", namespace, "--from-literal=ca.crt=evil",
        "--dry-run=client", "-o", "yaml",
    ).stdout
    result = user.kubectl("replace", "-n", namespace, "-f", "-", input=out)
    assert result.returncode == 0, result.stderr
    ca = kapi_server.ca_path.read_text()
    wait_for(
        lambda: json.loads(
            kapi_server.kubectl("get", "cm", CA_CM, "-n", namespace, "-o", "json").stdout
        )["data"] == {"ca.crt": ca},
        what="real CA back",
    )


def test_terminating_namespace_is_not_held_by_the_publisher(kapi_server, core):
    """Deleting a namespace deletes its kube-root-ca.crt for good: the
    publisher makes none in a terminating namespace, so the namespace goes."""
    name = f"cp-{uuid.uuid4().hex[:8]}"
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    wait_for(lambda: _read_cm(core, name), what="kube-root-ca.crt")
    core.delete_namespace(name)
    wait_for(lambda: _get_ns(core, name) is None, timeout=60, what="namespace gone")


def _get_ns(core, name):
    try:
        return core.read_namespace(name)
    except ApiException as exc:
        assert exc.status == 404, exc.body
        return None
