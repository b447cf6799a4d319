"""Real clients: kubectl get -w / --watch-only / --chunk-size, and the official
Python client's watch, including a list-then-watch loop across a restart."""

from __future__ import annotations

import json
import subprocess
import time

import pytest
from kapi_testserver import kubectl_binary, start_server, stop_server
from kubernetes import client, config, watch

from tests.watch.helpers import ROOT_CA, create, delete, update


def cm_manifest(ns: str, name: str) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": name, "namespace": ns}, "data": {"k": "v"}})


def kubectl_watch(server, *args: str) -> subprocess.Popen:
    return subprocess.Popen([kubectl_binary(), "--kubeconfig", str(server.kubeconfig_path), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen, wait: float = 15) -> str:
    out, err = proc.communicate(timeout=wait)
    return out + err


def test_kubectl_get_watch(watch_server, watch_api, watch_ns):
    """kubectl get -w prints the current objects, then each change."""
    create(watch_api, watch_ns, "before")
    proc = kubectl_watch(watch_server, "get", "configmaps", "-n", watch_ns, "-w", "--request-timeout=6s")
    time.sleep(2)
    watch_server.kubectl("create", "-f", "-", input=cm_manifest(watch_ns, "during"))
    delete(watch_api, watch_ns, "before")
    out = finish(proc)
    lines = [line.split()[0] for line in out.splitlines() if line and not line.startswith(("NAME", "E", "I", "W"))]
    assert lines[0] == "before" and "during" in lines and lines.count("before") == 2, out
    assert out.splitlines()[0].split()[:2] == ["NAME", "DATA"]


def test_kubectl_watch_only(watch_server, watch_api, watch_ns):
    """--watch-only prints only the changes."""
    create(watch_api, watch_ns, "old")
    proc = kubectl_watch(watch_server, "get", "configmaps", "-n", watch_ns, "--watch-only",
                         "-o", "name", "--request-timeout=8s")
    for i in range(6):  # kubectl may take a while to start watching
        time.sleep(1)
        create(watch_api, watch_ns, f"new{i}")
    out = finish(proc)
    assert "configmap/new5" in out and "configmap/old" not in out, out


def test_kubectl_chunk_size(watch_server, watch_api, watch_ns):
    """--chunk-size=N pages with limit/continue and prints every object once."""
    for i in range(5):
        create(watch_api, watch_ns, f"c{i}")
    r = watch_server.kubectl("get", "configmaps", "-n", watch_ns, "--chunk-size=2", "-o", "name", "-v=6")
    # The namespace also holds the root-CA publisher's ConfigMap (after the
    # c*, in name order): six objects, three pages.
    assert r.stdout.split() == [f"configmap/c{i}" for i in range(5)] + [f"configmap/{ROOT_CA}"]
    assert r.stderr.count("limit=2") >= 3, r.stderr


@pytest.fixture
def core_v1(watch_server):
    api_client = config.new_client_from_config(config_file=str(watch_server.kubeconfig_path))
    yield client.CoreV1Api(api_client)
    api_client.close()


def test_python_client_watch_stream(core_v1, watch_api, watch_ns):
    """watch.Watch().stream decodes ADDED/MODIFIED/DELETED into typed objects."""
    start = create(watch_api, watch_ns, "a")
    update(watch_api, watch_ns, "a", data={"k": "1"})
    delete(watch_api, watch_ns, "a")
    w = watch.Watch()
    got = []
    for event in w.stream(core_v1.list_namespaced_config_map, watch_ns,
                          resource_version=start["metadata"]["resourceVersion"], timeout_seconds=2,
                          allow_watch_bookmarks=True):
        if event["type"] != "BOOKMARK":
            got.append((event["type"], event["object"].metadata.name))
    assert got == [("MODIFIED", "a"), ("DELETED", "a")]


def test_list_then_watch_across_restart(served_dir):
    """A list-then-watch loop resumes after a server restart from the last
    resourceVersion it saw, without missing the writes made meanwhile."""
    data_dir = served_dir
    server = start_server(data_dir)
    try:
        api_client = config.new_client_from_config(config_file=str(server.kubeconfig_path))
        v1 = client.CoreV1Api(api_client)
        v1.create_namespace({"metadata": {"name": "r"}})
        # The root-CA publisher's ConfigMap lands in every new namespace: let
        # it land before the list, and leave it out of what the test saw.
        _wait_for_root_ca(v1, "r")
        v1.create_namespaced_config_map("r", {"metadata": {"name": "one"}})
        listed = v1.list_namespaced_config_map("r")
        last = listed.metadata.resource_version
        seen = {i.metadata.name for i in listed.items} - {ROOT_CA}
        v1.create_namespaced_config_map("r", {"metadata": {"name": "two"}})
        api_client.close()
        port = int(server.url.rsplit(":", 1)[1])
        stop_server(server)
        server = start_server(data_dir, port=port)
        api_client = config.new_client_from_config(config_file=str(server.kubeconfig_path))
        v1 = client.CoreV1Api(api_client)
        v1.create_namespaced_config_map("r", {"metadata": {"name": "three"}})
        events = []
        for event in watch.Watch().stream(v1.list_namespaced_config_map, "r", resource_version=last, timeout_seconds=2):
            events.append((event["type"], event["object"].metadata.name))
            last = event["object"].metadata.resource_version
        assert events == [("ADDED", "two"), ("ADDED", "three")]
        assert seen == {"one"}
        api_client.close()
    finally:
        stop_server(server)


def _wait_for_root_ca(v1, ns: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not any(i.metadata.name == ROOT_CA for i in v1.list_namespaced_config_map(ns).items):
        assert time.monotonic() < deadline, f"no {ROOT_CA} in {ns}"
        time.sleep(0.05)
