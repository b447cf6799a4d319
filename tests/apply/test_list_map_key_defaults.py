"""Server-side apply of list-map items that omit a defaulted key: ``ports:
[{port: 80}]`` is the item ``[port=80,protocol="TCP"]`` (the key's schema default,
as structured-merge-diff reads it), so it merges with the stored, defaulted item
instead of adding a second one."""

from __future__ import annotations

import yaml


def _apply(api, path: str, body: dict, manager: str):
    return api.request(
        "PATCH",
        path,
        yaml.safe_dump(body),
        content_type="application/apply-patch+yaml",
        params={"fieldManager": manager},
    )


def _service(name: str, ports: list) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"ports": ports},
    }


def _owned(obj: dict, manager: str) -> dict:
    entry = next(e for e in obj["metadata"]["managedFields"] if e["manager"] == manager)
    return entry["fieldsV1"]


def test_service_port_without_protocol_merges_with_stored_item(api, name):
    path = f"/api/v1/namespaces/default/services/{name}"
    first = _apply(api, path, _service(name, [{"port": 80, "name": "http"}]), "alice")
    assert first.status_code == 201, first.text
    assert first.json()["spec"]["ports"] == [
        {"name": "http", "port": 80, "protocol": "TCP", "targetPort": 80}
    ]
    key = 'k:{"port":80,"protocol":"TCP"}'
    assert set(_owned(first.json(), "alice")["f:spec"]["f:ports"]) == {key}
    assert set(_owned(first.json(), "alice")["f:spec"]["f:ports"][key]) == {
        ".",
        "f:name",
        "f:port",
    }

    again = _apply(
        api,
        path,
        _service(name, [{"port": 80, "name": "web", "targetPort": 8080}]),
        "alice",
    )
    assert again.status_code == 200, again.text
    assert again.json()["spec"]["ports"] == [
        {"name": "web", "port": 80, "protocol": "TCP", "targetPort": 8080}
    ]

    # Another manager naming the protocol explicitly shares the same item.
    bob = _apply(
        api,
        path,
        _service(name, [{"port": 80, "protocol": "TCP", "name": "web"}]),
        "bob",
    )
    assert bob.status_code == 200, bob.text
    assert len(bob.json()["spec"]["ports"]) == 1

    # Dropping the item from alice's config leaves it to bob; a UDP item is separate.
    udp = _apply(
        api,
        path,
        _service(name, [{"port": 80, "protocol": "UDP", "name": "dns"}]),
        "alice",
    )
    assert udp.status_code == 200, udp.text
    ports = udp.json()["spec"]["ports"]
    assert sorted((p["port"], p["protocol"]) for p in ports) == [
        (80, "TCP"),
        (80, "UDP"),
    ]
    api.request("DELETE", path)


def test_container_port_without_protocol_merges_with_stored_item(api, name):
    path = f"/apis/apps/v1/namespaces/default/deployments/{name}"

    def deployment(port: dict) -> dict:
        return {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": name},
            "spec": {
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {
                        "containers": [
                            {"name": "c", "image": "nginx:1.27", "ports": [port]}
                        ]
                    },
                },
            },
        }

    created = _apply(api, path, deployment({"containerPort": 80}), "alice")
    assert created.status_code == 201, created.text
    again = _apply(
        api, path, deployment({"containerPort": 80, "name": "http"}), "alice"
    )
    assert again.status_code == 200, again.text
    container = again.json()["spec"]["template"]["spec"]["containers"][0]
    assert container["ports"] == [
        {"containerPort": 80, "name": "http", "protocol": "TCP"}
    ]
    api.request("DELETE", path)
