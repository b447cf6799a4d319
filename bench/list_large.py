"""Lists of many ConfigMaps (issue #15's list rows): a consistent full list, a
``resourceVersion=0`` full list, a paged walk (limit=500 + continue, every
page), and a label-selector list matching 1%; wall time and server CPU per list.

    python bench/list_large.py [--objects 10000] [--kubeconfig KC --data-dir DIR] [--runs 5]

Without ``--kubeconfig`` it starts its own ``serve``. Server CPU counts every
process of the server (serve, API workers, Celery, PostgreSQL and its backends,
Redis) from ``/proc``, as ``../shared/bench/kbench.py`` does; it needs
``--data-dir`` with ``--kubeconfig``. Objects are made once: a namespace that
already holds them (``listbench``) is reused, so rerunning costs only the lists.
For CPU in the request thread alone, unaffected by neighbours, see
``list_inproc.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _load import run_load, server
from kbench_table import server_pids

NAMESPACE = "listbench"


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of ``pids`` and of their threads, from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # ended (a PostgreSQL backend)
        total += int(fields[11]) + int(fields[12])
    return total / tick


def timed_get(target, path: str, conn=None) -> tuple[float, dict]:
    """GET ``path`` on ``conn`` (kept open), or on a new connection: the kernel
    spreads new connections over the API processes."""
    own = conn is None
    conn = conn or target.connection()
    t = time.perf_counter()
    conn.request("GET", path, headers=target.headers())
    r = conn.getresponse()
    raw = r.read()
    elapsed = time.perf_counter() - t
    if own:
        conn.close()
    body = json.loads(raw)
    assert r.status == 200, body
    return elapsed, body


def _populate(target, objects: int) -> float | None:
    conn = target.connection()
    conn.request("POST", "/api/v1/namespaces", body=json.dumps({"metadata": {"name": NAMESPACE}}).encode(),
                 headers=target.headers())
    conn.getresponse().read()
    _, body = timed_get(target, f"/api/v1/namespaces/{NAMESPACE}/configmaps?limit=1")
    have = len(body["items"]) + body["metadata"].get("remainingItemCount", 0)
    if have >= objects:
        return None
    payload = "x" * 1000  # 1 KiB ConfigMaps, as kbench's
    requests = [("POST", f"/api/v1/namespaces/{NAMESPACE}/configmaps",
                 {"metadata": {"name": f"cm-{i:05d}", "labels": {"group": f"g{i % 100}"}}, "data": {"v": payload}},
                 "application/json", (201, 409)) for i in range(objects)]
    created = run_load(target, requests, clients=8)
    assert not created["errors"], created["errors"][:3]
    return round(created["rate"], 1)


def measure(target, pids_of, name: str, runs: int, one) -> dict:
    """``one()`` run ``runs`` times: wall (min, median) and server CPU per run."""
    for _ in range(4):
        one()  # warm: each API process's first list of the resource fills its cache
    walls = []
    pids = pids_of()
    cpu = _cpu_seconds(pids) if pids else None
    for _ in range(runs):
        walls.append(one())
    figures = {"min_ms": round(min(walls) * 1e3, 1), "median_ms": round(statistics.median(walls) * 1e3, 1)}
    if pids:
        figures["server_cpu_ms_per_list"] = round((_cpu_seconds(pids_of()) - cpu) * 1e3 / runs, 1)
    return {name: figures}


def main(args) -> dict:
    with server(args.kubeconfig) as (target, srv):
        data_dir = Path(args.data_dir) if args.data_dir else (srv.data_dir if srv else None)

        def pids_of() -> list[int]:
            return server_pids(data_dir) if data_dir else []

        rate = _populate(target, args.objects)
        base = f"/api/v1/namespaces/{NAMESPACE}/configmaps"

        def full(query: str):
            def one() -> float:
                elapsed, body = timed_get(target, base + query)
                assert len(body["items"]) == args.objects, len(body["items"])
                return elapsed

            return one

        def paged(query: str):
            def one() -> float:
                t = time.perf_counter()
                token, n = "", 0
                conn = target.connection()  # one client's walk: one kept-alive connection, as kbench's
                while True:
                    _, body = timed_get(target, f"{base}?limit=500{query}" + (f"&continue={token}" if token else ""), conn)
                    n += len(body["items"])
                    token = body["metadata"].get("continue")
                    if not token:
                        break
                elapsed = time.perf_counter() - t
                conn.close()
                assert n == args.objects, n
                return elapsed

            return one

        def selected() -> float:
            elapsed, body = timed_get(target, f"{base}?labelSelector=group%3Dg7")
            assert len(body["items"]) == args.objects // 100
            return elapsed

        out: dict = {"objects": args.objects, "create_rate_per_s": rate, "loadavg_before": os.getloadavg()}
        out.update(measure(target, pids_of, "consistent", args.runs, full("")))
        out.update(measure(target, pids_of, "rv0", args.runs, full("?resourceVersion=0")))
        out.update(measure(target, pids_of, "paged500", args.runs, paged("")))
        out.update(measure(target, pids_of, "paged500_rv0", args.runs, paged("&resourceVersion=0")))
        out.update(measure(target, pids_of, "selector1pct", args.runs, selected))
        out["loadavg_after"] = os.getloadavg()
        return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=10000)
    parser.add_argument("--kubeconfig")
    parser.add_argument("--data-dir", help="the data directory of the server in --kubeconfig (for server CPU)")
    parser.add_argument("--runs", type=int, default=5)
    print(json.dumps(main(parser.parse_args()), indent=1))
