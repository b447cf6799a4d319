"""The core verbs through the real kubectl."""

from __future__ import annotations

import json

import yaml


def manifest(name: str, namespace: str, data: dict, labels: dict | None = None) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
            "data": data,
        }
    )


def test_version_and_api_resources(kapi_server):
    version = kapi_server.kubectl("version", "-o", "json")
    assert json.loads(version.stdout)["serverVersion"]["major"] == "1"
    resources = kapi_server.kubectl("api-resources").stdout
    lines = {line.split()[0]: line.split() for line in resources.splitlines()[1:]}
    assert lines["configmaps"][1] == "cm"
    assert lines["namespaces"][1:] == ["ns", "v1", "false", "Namespace"]
    assert "leases" in lines


def test_create_get_replace_delete(kapi_server, namespace):
    k = kapi_server.kubectl
    out = k("create", "-f", "-", input=manifest("demo", namespace, {"a": "1"}, {"app": "web"}))
    assert out.stdout.strip() == "configmap/demo created"
    table = k("get", "configmaps", "-n", namespace).stdout.splitlines()
    assert table[0].split() == ["NAME", "DATA", "AGE"]
    assert table[1].split()[:2] == ["demo", "1"]
    as_yaml = yaml.safe_load(k("get", "cm", "demo", "-n", namespace, "-o", "yaml").stdout)
    assert as_yaml["data"] == {"a": "1"}
    assert as_yaml["metadata"]["labels"] == {"app": "web"}
    as_json = json.loads(k("get", "cm/demo", "-n", namespace, "-o", "json").stdout)
    assert as_json["metadata"]["uid"] == as_yaml["metadata"]["uid"]
    wide = k("get", "cm", "-n", namespace, "-o", "wide", "--show-labels").stdout
    assert "app=web" in wide
    replaced = k("replace", "-f", "-", input=manifest("demo", namespace, {"a": "2", "b": "3"}))
    assert replaced.stdout.strip() == "configmap/demo replaced"
    assert json.loads(k("get", "cm", "demo", "-n", namespace, "-o", "json").stdout)["data"] == {"a": "2", "b": "3"}
    deleted = k("delete", "cm", "demo", "-n", namespace)
    assert 'configmap "demo" deleted' in deleted.stdout
    missing = k("get", "cm", "demo", "-n", namespace, check=False)
    assert missing.returncode != 0
    assert 'configmaps "demo" not found' in missing.stderr


def test_get_across_namespaces_and_selectors(kapi_server, namespace):
    k = kapi_server.kubectl
    k("create", "-f", "-", input=manifest("front", namespace, {"x": "1"}, {"tier": "front", "probe": namespace}))
    k("create", "-f", "-", input=manifest("back", namespace, {"x": "1"}, {"tier": "back", "probe": namespace}))
    everywhere = k("get", "cm", "-A", "-l", f"probe={namespace}").stdout.splitlines()
    assert everywhere[0].split() == ["NAMESPACE", "NAME", "DATA", "AGE"]
    assert sorted(line.split()[1] for line in everywhere[1:]) == ["back", "front"]
    assert all(line.split()[0] == namespace for line in everywhere[1:])
    front = k("get", "cm", "-n", namespace, "-l", "tier in (front)", "-o", "name").stdout.split()
    assert front == ["configmap/front"]
    by_field = k("get", "cm", "-n", namespace, "--field-selector", "metadata.name=back", "-o", "name").stdout.split()
    assert by_field == ["configmap/back"]


def test_namespaces_and_secrets_print_like_kube(kapi_server, namespace):
    k = kapi_server.kubectl
    ns = k("get", "ns", namespace).stdout.splitlines()
    assert ns[0].split() == ["NAME", "STATUS", "AGE"]
    assert ns[1].split()[:2] == [namespace, "Active"]
    secret = yaml.safe_dump({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": namespace}, "stringData": {"u": "me"}})
    k("create", "-f", "-", input=secret)
    rows = k("get", "secrets", "-n", namespace).stdout.splitlines()
    assert rows[0].split() == ["NAME", "TYPE", "DATA", "AGE"]
    assert rows[1].split()[:3] == ["s", "Opaque", "1"]


def test_server_errors_reach_kubectl(kapi_server, namespace):
    k = kapi_server.kubectl
    bad = k("create", "-f", "-", input=manifest("Bad_Name", namespace, {}), check=False)
    assert bad.returncode != 0
    assert 'ConfigMap "Bad_Name" is invalid' in bad.stderr
    k("create", "-f", "-", input=manifest("twice", namespace, {}))
    again = k("create", "-f", "-", input=manifest("twice", namespace, {}), check=False)
    assert 'configmaps "twice" already exists' in again.stderr


def test_imperative_create_commands(kapi_server, namespace):
    """kubectl's typed clients send protobuf bodies; kapi decodes them."""
    k = kapi_server.kubectl
    assert k("create", "configmap", "imp", "-n", namespace, "--from-literal=a=b").stdout.strip() == "configmap/imp created"
    k("create", "secret", "generic", "pw", "-n", namespace, "--from-literal=password=s3cret")
    k("create", "serviceaccount", "bot", "-n", namespace)
    ns = f"{namespace}-x"
    assert k("create", "namespace", ns).stdout.strip() == f"namespace/{ns} created"
    cm = json.loads(k("get", "cm", "imp", "-n", namespace, "-o", "json").stdout)
    assert cm["data"] == {"a": "b"}
    secret = json.loads(k("get", "secret", "pw", "-n", namespace, "-o", "json").stdout)
    import base64

    assert base64.b64decode(secret["data"]["password"]) == b"s3cret"
    assert k("get", "sa", "bot", "-n", namespace, "-o", "name").stdout.strip() == "serviceaccount/bot"
    assert "Active" in k("get", "ns", ns).stdout
    k("delete", "ns", ns)
