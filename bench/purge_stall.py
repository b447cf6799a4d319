"""Does deleting a big namespace stall everyone else? (issue #20)

Each round fills namespace A with ``--objects`` ConfigMaps of 1 KiB, deletes
it, and meanwhile probes namespace B from one client ten times a second (each
tick a list of B, ``limit=100``, then a create in B). It prints, for the 40 s
after the DELETE, the probes (requests) completed, their p50/p99/max latency
and any that failed, and the seconds until GET of A answers 404. The rounds run
back to back on one server, as an operator deleting one namespace after
another would (the issue saw the stall from the second purge on).

    .venv/bin/python bench/purge_stall.py                         # fresh serve, 3 x 10,000
    .venv/bin/python bench/purge_stall.py --kubeconfig kubeconfig --rounds 1 --objects 2000

Every loop is bounded: the fill by its count, the probes by ``--window``, the
wait for the namespace by ``--purge-timeout``.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _load import Target, percentile, run_load, server

PAYLOAD = "x" * 1000  # with the metadata, about 1 KiB per ConfigMap


def _request(target: Target, conn, method: str, path: str, body=None):
    conn.request(
        method,
        path,
        body=json.dumps(body).encode() if body is not None else None,
        headers=target.headers(),
    )
    response = conn.getresponse()
    payload = response.read()
    return response.status, payload


def _once(target: Target, method: str, path: str, body=None):
    conn = target.connection()
    try:
        return _request(target, conn, method, path, body)
    finally:
        conn.close()


def _namespace(target: Target, name: str) -> None:
    status, payload = _once(target, "POST", "/api/v1/namespaces", {"metadata": {"name": name}})
    if status != 201:
        raise SystemExit(f"could not create namespace {name}: {status} {payload[:200]!r}")


def _fill(target: Target, namespace: str, n: int) -> dict:
    requests = [
        (
            "POST",
            f"/api/v1/namespaces/{namespace}/configmaps",
            {"metadata": {"name": f"o{i:05d}"}, "data": {"payload": PAYLOAD}},
            "application/json",
            (201,),
        )
        for i in range(n)
    ]
    figures = run_load(target, requests, clients=8, processes=2)
    if figures["errors"]:
        raise SystemExit(f"fill failed: {figures['errors'][:3]}")
    return figures


class Prober(threading.Thread):
    """Ten ticks a second until ``stop``; each tick lists B, then creates in B.

    Sequential on one keep-alive connection, like a controller: a stalled
    request delays the next one, and ticks missed meanwhile are skipped (not
    made up in a burst)."""

    def __init__(self, target: Target, namespace: str, tag: str, window: float) -> None:
        super().__init__(daemon=True)
        self.target = target
        self.namespace = namespace
        self.tag = tag
        self.window = window
        self.latencies: list[float] = []
        self.failures: list[str] = []
        self.started = 0.0

    def run(self) -> None:
        conn = self.target.connection()
        self.started = time.monotonic()
        end = self.started + self.window
        base = f"/api/v1/namespaces/{self.namespace}/configmaps"
        tick = 0
        try:
            while True:
                due = self.started + tick * 0.1
                now = time.monotonic()
                if due > now:
                    time.sleep(due - now)
                if time.monotonic() >= end:
                    return
                probes = [
                    ("GET", f"{base}?limit=100", None, 200),
                    ("POST", base, {"metadata": {"name": f"{self.tag}-{tick:05d}"}}, 201),
                ]
                for method, path, body, ok in probes:
                    start = time.monotonic()
                    try:
                        status, payload = _request(self.target, conn, method, path, body)
                    except OSError as exc:
                        status, payload = 0, str(exc).encode()
                        conn.close()
                        conn = self.target.connection()
                    done = time.monotonic()
                    if done > end:
                        return  # finished after the window: not counted
                    self.latencies.append(done - start)
                    if status != ok:
                        self.failures.append(f"{method} {status} {payload[:160]!r}")
                # Skip the ticks a slow probe overran.
                tick = max(tick + 1, int((time.monotonic() - self.started) / 0.1))
        finally:
            conn.close()


def purge_round(target: Target, probe_ns: str, objects: int, window: float, timeout: float) -> dict:
    victim = f"purge-{uuid.uuid4().hex[:6]}"
    _namespace(target, victim)
    fill = _fill(target, victim, objects)
    time.sleep(3)  # let the lifecycle feed read the creations first
    prober = Prober(target, probe_ns, victim, window)
    prober.start()
    start = time.monotonic()
    status, payload = _once(target, "DELETE", f"/api/v1/namespaces/{victim}")
    if status != 200:
        raise SystemExit(f"DELETE namespace: {status} {payload[:200]!r}")
    purge = None
    while time.monotonic() - start < timeout:
        if _once(target, "GET", f"/api/v1/namespaces/{victim}")[0] == 404:
            purge = time.monotonic() - start
            break
        time.sleep(0.5)
    prober.join(window + 120)
    lat = prober.latencies
    return {
        "fill_rate": fill["rate"],
        "probes": len(lat),
        "failed": len(prober.failures),
        "first_failure": prober.failures[0] if prober.failures else "",
        "p50_ms": percentile(lat, 50) * 1000,
        "p99_ms": percentile(lat, 99) * 1000,
        "max_ms": max(lat, default=0.0) * 1000,
        "purge_s": purge,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--kubeconfig", help="a running kapi (else a fresh serve)")
    parser.add_argument("--server", help="override the kubeconfig's server URL")
    parser.add_argument("--objects", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--window", type=float, default=40.0, help="seconds of probing")
    parser.add_argument("--purge-timeout", type=float, default=300.0)
    args = parser.parse_args()
    rows = []
    with server(args.kubeconfig) as (target, _srv):
        if args.server:
            target = Target(args.server, target.token, target.ca_path)
        probe_ns = f"probe-{uuid.uuid4().hex[:6]}"
        _namespace(target, probe_ns)
        for n in range(1, args.rounds + 1):
            row = purge_round(target, probe_ns, args.objects, args.window, args.purge_timeout)
            rows.append(row)
            gone = f"{row['purge_s']:.1f} s" if row["purge_s"] is not None else "not gone"
            print(
                f"purge {n}: {args.objects} ConfigMaps (filled at {row['fill_rate']:.0f}/s); "
                f"probes in {args.window:.0f} s: {row['probes']} ({row['failed']} failed), "
                f"p50 {row['p50_ms']:.1f} ms, p99 {row['p99_ms']:.1f} ms, "
                f"max {row['max_ms']:.0f} ms; namespace gone in {gone}"
                + (f"; first failure: {row['first_failure']}" if row["failed"] else ""),
                flush=True,
            )
    print("\n| purge | probes in 40 s | p99 ms | max ms | namespace gone |")
    print("|---|---|---|---|---|")
    for n, row in enumerate(rows, 1):
        gone = f"{row['purge_s']:.1f} s" if row["purge_s"] is not None else "not gone"
        print(
            f"| {n} | {row['probes']} | {row['p99_ms']:.0f} | {row['max_ms']:.0f} | {gone} |"
        )


if __name__ == "__main__":
    main()
