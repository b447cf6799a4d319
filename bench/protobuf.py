"""Protobuf responses against JSON: encoding CPU per object in process, and server
CPU and bytes per list of ConfigMaps over HTTP.

    python bench/protobuf.py [--objects 1000] [--lists 20] [--no-server]

The server figure is the CPU of all of the server's processes (uvicorn workers,
Celery, PostgreSQL) over ``--lists`` full lists, divided by the lists: what a
client-go informer's relist costs kapi in each encoding.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "tests"))

from _load import run_load, server  # noqa: E402

PROTOBUF = "application/vnd.kubernetes.protobuf"

DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {
        "name": "web",
        "namespace": "default",
        "uid": "5b0c7d36-4f7e-4ad4-9f43-0e1d2b3c4d5e",
        "resourceVersion": "12345",
        "generation": 3,
        "creationTimestamp": "2026-01-01T00:00:00Z",
        "labels": {"app": "web", "tier": "front"},
        "annotations": {"deployment.kubernetes.io/revision": "3"},
        "managedFields": [
            {
                "manager": "kubectl",
                "operation": "Update",
                "apiVersion": "apps/v1",
                "time": "2026-01-01T00:00:00Z",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:spec": {"f:replicas": {}, "f:template": {"f:spec": {"f:containers": {}}}}},
            }
        ],
    },
    "spec": {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "containers": [
                    {
                        "name": "web",
                        "image": "nginx:1.27",
                        "ports": [{"containerPort": 80, "protocol": "TCP"}],
                        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                        "readinessProbe": {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 10},
                    }
                ],
                "restartPolicy": "Always",
                "terminationGracePeriodSeconds": 30,
            },
        },
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
    },
    "status": {"observedGeneration": 3, "replicas": 3, "readyReplicas": 3, "availableReplicas": 3},
}
CONFIGMAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "c", "namespace": "default", "resourceVersion": "1", "uid": "u"},
    "data": {"payload": "x" * 900},
}


def _per_object_us(fn, obj, rounds: int) -> float:
    start = time.process_time()
    for _ in range(rounds):
        fn(obj)
    return round((time.process_time() - start) / rounds * 1e6, 1)


def in_process(rounds: int = 5000) -> dict:
    import orjson

    from kapi.protobuf import decode_object, encode_object

    out = {}
    for name, obj in (("deployment", DEPLOYMENT), ("configmap_1k", CONFIGMAP)):
        body = encode_object(obj)
        out[name] = {
            "json_encode_us": _per_object_us(orjson.dumps, obj, rounds),
            "protobuf_encode_us": _per_object_us(encode_object, obj, rounds),
            "protobuf_decode_us": _per_object_us(decode_object, body, rounds),
            "json_bytes": len(orjson.dumps(obj)),
            "protobuf_bytes": len(body),
        }
    return out


def _server_cpu(srv) -> float:
    from kapi_testserver import server_processes

    total = 0.0
    for proc in server_processes(srv):
        try:
            times = proc.cpu_times()
        except Exception:  # noqa: BLE001 - a process that ended counts nothing more
            continue
        total += times.user + times.system
    return total


def over_http(objects: int, lists: int, result: dict) -> None:
    """Adds ``result["http"]`` and prints ``result`` while the server still runs
    (a slow stop on a loaded machine must not lose the figures)."""
    with server() as (target, srv):
        ns = "pbbench"
        conn = target.connection()
        conn.request("POST", "/api/v1/namespaces", body=json.dumps({"metadata": {"name": ns}}).encode(), headers=target.headers())
        conn.getresponse().read()
        requests = [
            ("POST", f"/api/v1/namespaces/{ns}/configmaps", {**CONFIGMAP, "metadata": {"name": f"cm-{i:05d}"}}, "application/json", (201,))
            for i in range(objects)
        ]
        created = run_load(target, requests, clients=8)
        assert not created["errors"], created["errors"][:3]
        figures = {"objects": objects, "lists": lists}
        for label, accept in (("json", "application/json"), ("protobuf", f"{PROTOBUF},application/json")):
            headers = {**target.headers(), "Accept": accept}
            conn = target.connection()
            size = 0
            before = _server_cpu(srv)
            wall = time.perf_counter()
            for _ in range(lists):
                conn.request("GET", f"/api/v1/namespaces/{ns}/configmaps", headers=headers)
                response = conn.getresponse()
                body = response.read()
                assert response.status == 200, body[:200]
                assert response.getheader("Content-Type").startswith(accept.split(",")[0])
                size = len(body)
            figures[label] = {
                "server_cpu_ms_per_list": round((_server_cpu(srv) - before) / lists * 1000, 1),
                "wall_ms_per_list": round((time.perf_counter() - wall) / lists * 1000, 1),
                "bytes_per_list": size,
            }
            conn.close()
        result["http"] = figures
        print(json.dumps(result, indent=1), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--lists", type=int, default=20)
    parser.add_argument("--no-server", action="store_true")
    args = parser.parse_args()
    result = {"in_process": in_process()}
    if args.no_server:
        print(json.dumps(result, indent=1))
    else:
        over_http(args.objects, args.lists, result)
