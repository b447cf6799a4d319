"""Lists of many ConfigMaps: full list, paged list (limit=500), selector list
matching 1%.

    python bench/list_large.py [--objects 10000] [--kubeconfig KC]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _load import run_load, server


def timed_get(target, path: str) -> tuple[float, dict]:
    conn = target.connection()
    t = time.perf_counter()
    conn.request("GET", path, headers=target.headers())
    r = conn.getresponse()
    body = json.loads(r.read())
    elapsed = time.perf_counter() - t
    conn.close()
    assert r.status == 200, body
    return elapsed, body


def main(args) -> dict:
    with server(args.kubeconfig) as (target, _srv):
        ns = "listbench"
        conn = target.connection()
        conn.request("POST", "/api/v1/namespaces", body=json.dumps({"metadata": {"name": ns}}).encode(), headers=target.headers())
        conn.getresponse().read()
        requests = [("POST", f"/api/v1/namespaces/{ns}/configmaps",
                     {"metadata": {"name": f"cm-{i:05d}", "labels": {"group": f"g{i % 100}"}}, "data": {"i": str(i)}},
                     "application/json", (201,)) for i in range(args.objects)]
        created = run_load(target, requests, clients=8)
        assert not created["errors"], created["errors"][:3]
        base = f"/api/v1/namespaces/{ns}/configmaps"
        full = []
        for _ in range(3):
            elapsed, body = timed_get(target, base)
            assert len(body["items"]) == args.objects
            full.append(elapsed)
        paged = []
        for _ in range(3):
            t = time.perf_counter()
            token, n = "", 0
            while True:
                _, body = timed_get(target, f"{base}?limit=500" + (f"&continue={token}" if token else ""))
                n += len(body["items"])
                token = body["metadata"].get("continue")
                if not token:
                    break
            assert n == args.objects
            paged.append(time.perf_counter() - t)
        selected = []
        for _ in range(3):
            elapsed, body = timed_get(target, f"{base}?labelSelector=group%3Dg7")
            assert len(body["items"]) == args.objects // 100
            selected.append(elapsed)
        return {
            "objects": args.objects, "create_rate_per_s": round(created["rate"], 1),
            "full_list_s": round(min(full), 3), "paged_list_500_s": round(min(paged), 3),
            "selector_1pct_s": round(min(selected), 4),
        }


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=10000)
    parser.add_argument("--kubeconfig")
    print(json.dumps(main(parser.parse_args()), indent=1))
