"""Request-thread CPU of big lists, in process: the whole Django stack (middleware,
authentication, RBAC, the list handler, rendering), no TLS or sockets, measured
with ``time.thread_time`` so neighbours on a shared machine do not count.

    python bench/list_inproc.py --data-dir DIR [--namespace NS] [--rounds 5]

Runs against the database of the kapi serving ``DIR`` (it must be running, with
the objects already there: ``bench/list_large.py --kubeconfig`` makes them) and
prints, for the list cache on and off (``KAPI_LIST_CACHE=0``, every list from
PostgreSQL, which is how ``main`` served consistent and paged lists), the
minimum and median thread CPU and wall time of: a consistent list, a
``resourceVersion=0`` list, a consistent paged walk (limit=500, all pages), and
a 1% label-selector list; the process's first consistent list, which fills its
store from the database; and the memory a store keeps per object. The watch cache runs on an event loop in a thread of
this process, as in an API process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _setup(data_dir: str) -> tuple[object, str]:
    os.environ["KAPI_DATA_DIR"] = data_dir
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
    os.environ.setdefault("KAPI_REQUEST_LOG", "0")
    os.environ.setdefault("KAPI_AUDIT_LOG", "-")
    import django

    django.setup()
    from django.test import Client

    from kapi.storage import listcache

    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, name="loop", daemon=True).start()
    listcache.bind_loop(loop)
    kubeconfig = yaml.safe_load(
        os.popen(f"{sys.executable} {ROOT / 'manage.py'} kubeconfig --data-dir {data_dir}").read()
    )
    token = kubeconfig["users"][0]["user"]["token"]
    return Client(HTTP_AUTHORIZATION=f"Bearer {token}"), token


class Meter:
    """Thread CPU and wall time spent inside requests only (not in parsing
    their answers, which is the client's work)."""

    def __init__(self, client) -> None:
        self.client = client
        self.cpu = self.wall = 0.0

    def get(self, path: str) -> dict:
        c, w = time.thread_time(), time.perf_counter()
        response = self.client.get(path, secure=True, HTTP_ACCEPT="application/json")
        content = b"".join(response.streaming_content) if response.streaming else response.content
        self.cpu += time.thread_time() - c
        self.wall += time.perf_counter() - w
        assert response.status_code == 200, content[:300]
        return json.loads(content)


def measure(client, base: str, rounds: int, expect: int) -> dict:
    def full(meter: Meter, params: str):
        body = meter.get(base + params)
        assert len(body["items"]) == expect, len(body["items"])

    def paged(meter: Meter):
        token, n = "", 0
        while True:
            body = meter.get(f"{base}?limit=500" + (f"&continue={token}" if token else ""))
            n += len(body["items"])
            token = body["metadata"].get("continue")
            if not token:
                break
        assert n == expect, n

    # kbench labels bucket=N, list_large.py group=gN (N = i % 100).
    one_percent = "bucket%3D7" if Meter(client).get(f"{base}?labelSelector=bucket%3D7")["items"] else "group%3Dg7"

    def selector(meter: Meter):
        meter.get(f"{base}?labelSelector={one_percent}")

    cases = {
        "consistent": lambda m: full(m, ""),
        "rv0": lambda m: full(m, "?resourceVersion=0"),
        "paged500": paged,
        "selector1pct": selector,
    }
    out = {}
    for name, fn in cases.items():
        first = Meter(client)
        fn(first)  # warm: the first consistent list fills the store; each list encodes what it serves
        if name == "consistent":
            # This process's first consistent list: the store filled from the database.
            out["consistent_first"] = {"cpu_ms": round(first.cpu * 1e3, 1), "wall_ms": round(first.wall * 1e3, 1)}
        cpu, wall = [], []
        for _ in range(rounds):
            meter = Meter(client)
            fn(meter)
            cpu.append(meter.cpu * 1e3)
            wall.append(meter.wall * 1e3)
        out[name] = {
            "cpu_ms_min": round(min(cpu), 1), "cpu_ms_median": round(statistics.median(cpu), 1),
            "wall_ms_min": round(min(wall), 1),
        }
    return out


def memory_per_object(namespace: str) -> dict:
    """Bytes a list cache store keeps per object (tracemalloc): what a fill
    keeps (the stored JSON and the entry around it), the served encoding
    (none where the served version is the stored form), and a snapshot's
    share."""
    import gc
    import tracemalloc

    from kapi.storage import default_storage
    from kapi.storage.interface import ListQuery
    from kapi.storage.listcache import ListCache, Store

    query = ListQuery(group="", resource="configmaps", namespace=namespace)
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    store = Store()
    store.fill(default_storage().list_encoded(query))
    gc.collect()
    filled = tracemalloc.get_traced_memory()[0]
    for entry in store.objects.values():
        ListCache.encode(entry, None)
    encoded = tracemalloc.get_traced_memory()[0]
    snapshot = store.snapshot()
    snap = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    n = len(store.objects)
    del snapshot
    return {
        "objects": n, "json_bytes": round(sum(len(e.item.json) for e in store.objects.values()) / n),
        "filled": round((filled - base) / n), "encoding": round((encoded - filled) / n),
        "snapshot": round((snap - encoded) / n),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--namespace", help="default: the kbench-* or listbench namespace with the most ConfigMaps")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cache", choices=("on", "off"), default="on")
    args = parser.parse_args()
    if args.cache == "off":
        os.environ["KAPI_LIST_CACHE"] = "0"
    client, _token = _setup(args.data_dir)
    from django.db import connection

    with connection.cursor() as cur:
        cur.execute(
            "SELECT namespace, count(*) FROM kapi_object WHERE \"group\" = '' AND resource = 'configmaps'"
            " GROUP BY 1 ORDER BY 2 DESC LIMIT 1"
        )
        namespace, count = cur.fetchone()
        if args.namespace:
            namespace = args.namespace
            cur.execute(
                "SELECT count(*) FROM kapi_object WHERE \"group\" = '' AND resource = 'configmaps' AND namespace = %s",
                [namespace],
            )
            (count,) = cur.fetchone()
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    figures = measure(client, base, args.rounds, count)
    figures["memory"] = memory_per_object(namespace)
    print(json.dumps({"cache": args.cache, "namespace": namespace, "objects": count,
                      "loadavg": os.getloadavg(), **figures}))


if __name__ == "__main__":
    main()
