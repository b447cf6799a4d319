"""/metrics, the request id and the per-request log line, on the session server."""

from __future__ import annotations

import json
import threading
import time
import uuid

import requests
from kapi_testserver import KapiServer


def _call(server: KapiServer, method: str, path: str, token: str | None = None, **kw):
    headers = kw.pop("headers", {})
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return requests.request(
        method, server.url + path, headers=headers, verify=str(server.ca_path),
        timeout=30, **kw,
    )


def _samples(text: str, name: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            key, _, value = line.rpartition(" ")
            out[key] = float(value)
    return out


def test_metrics_counts_requests_with_kube_labels(kapi_server: KapiServer) -> None:
    """A create shows up in apiserver_request_total as POST configmaps 201, and
    the scrape also carries stored objects, change log, queue and task metrics."""
    name = f"m-{uuid.uuid4().hex[:6]}"
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
    created = _call(
        kapi_server, "POST", "/api/v1/namespaces/default/configmaps", kapi_server.token, json=body
    )
    assert created.status_code == 201
    text = _call(kapi_server, "GET", "/metrics", kapi_server.token).text
    total = _samples(text, "apiserver_request_total")
    assert any(
        'verb="POST"' in k and 'resource="configmaps"' in k and 'code="201"' in k
        and 'scope="namespace"' in k and 'version="v1"' in k
        for k in total
    ), total
    assert _samples(text, "apiserver_request_duration_seconds_count")
    objects = _samples(text, "apiserver_storage_objects")
    assert objects['apiserver_storage_objects{resource="configmaps"}'] >= 1
    for name in (
        "kapi_change_log_rows",
        "kapi_change_log_compacted_revision",
        "kapi_celery_queue_length",
        "kapi_celery_task_duration_seconds_count",
    ):
        assert _samples(text, name), name


def test_open_watches_are_longrunning_requests(kapi_server: KapiServer) -> None:
    """An open watch counts in apiserver_longrunning_requests until it ends."""

    def gauge() -> float:
        text = _call(kapi_server, "GET", "/metrics", kapi_server.token).text
        return sum(
            v for k, v in _samples(text, "apiserver_longrunning_requests").items()
            if 'resource="secrets"' in k
        )

    before = gauge()
    stop = threading.Event()

    def watch() -> None:
        with _call(
            kapi_server, "GET", "/api/v1/namespaces/default/secrets?watch=1&timeoutSeconds=5",
            kapi_server.token, stream=True,
        ) as response:
            for _ in response.iter_lines():
                if stop.is_set():
                    break

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    deadline = time.monotonic() + 4
    while gauge() < before + 1:
        assert time.monotonic() < deadline, "watch not counted"
        time.sleep(0.2)
    stop.set()
    thread.join(10)


def test_metrics_need_authorization(kapi_server: KapiServer) -> None:
    """Like kube's: anonymous 401, a user without the grant 403, the
    system:monitoring group 200."""
    assert _call(kapi_server, "GET", "/metrics").status_code == 401
    as_user = {"Impersonate-User": "nobody-special"}
    denied = _call(kapi_server, "GET", "/metrics", kapi_server.token, headers=as_user)
    assert denied.status_code == 403
    monitoring = {**as_user, "Impersonate-Group": "system:monitoring"}
    allowed = _call(kapi_server, "GET", "/metrics", kapi_server.token, headers=monitoring)
    assert allowed.status_code == 200
    assert allowed.headers["Content-Type"].startswith("text/plain")
    assert "# TYPE apiserver_request_total counter" in allowed.text


def test_request_id_header_and_log_line(kapi_server: KapiServer) -> None:
    """Every response names its request; a client's X-Request-Id is echoed, and
    the server logs one JSON line with that id and the request's fields."""
    fresh = _call(kapi_server, "GET", "/api/v1/namespaces/default", kapi_server.token)
    uuid.UUID(fresh.headers["X-Request-Id"])
    assert fresh.headers["Audit-Id"] == fresh.headers["X-Request-Id"]
    mine = f"test-{uuid.uuid4().hex}"
    response = _call(
        kapi_server, "GET", "/api/v1/namespaces/default/configmaps/no-such",
        kapi_server.token, headers={"X-Request-Id": mine},
    )
    assert response.status_code == 404
    assert response.headers["X-Request-Id"] == mine
    deadline = time.monotonic() + 5
    while True:
        lines = [
            json.loads(line) for line in kapi_server.output().splitlines()
            if mine in line and line.startswith("{")
        ]
        if lines or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert len(lines) == 1, lines
    line = lines[0]
    assert line["logger"] == "kapi.request"
    assert line["requestID"] == mine
    assert line["user"] == "admin"
    assert (line["verb"], line["resource"], line["namespace"], line["name"], line["code"]) == (
        "GET", "configmaps", "default", "no-such", 404,
    )
    assert line["duration"] >= 0 and line["time"].endswith("Z")
