"""What the per-event permission guard of a watch costs (``kapi.auth.revocation``).

N watchers of one namespace's ConfigMaps on ONE API process, W creates at a
steady rate, for each kind of caller: the admin (static token,
``system:masters``), a ServiceAccount token and a Django user's token, each
restricted callers allowed by a RoleBinding; then the same with RBAC churn (a
RoleBinding for somebody else created every ``--churn`` seconds, so every
watcher's permission is re-checked). Figures per run: server CPU (every
process of ``serve``: API process, PostgreSQL, ...) per delivered event in
microseconds, delivery delay p50/p99, and missed events (must be 0).

    python bench/watch_revocation.py [--watchers 200] [--writes 200] [--rate 40] [--churn 0.5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

import yaml  # noqa: E402
from _load import Target, percentile  # noqa: E402
from _watch import check_streams, raw_watcher, serve  # noqa: E402
from kapi_testserver import ROOT, server_processes  # noqa: E402


def _request(target: Target, method: str, path: str, body: dict | None = None) -> dict:
    conn = target.connection()
    try:
        conn.request(method, path, body=json.dumps(body).encode() if body else None, headers=target.headers())
        resp = conn.getresponse()
        payload = json.loads(resp.read() or b"{}")
        assert resp.status < 300, payload
        return payload
    finally:
        conn.close()


def _cpu(srv) -> float:
    total = 0.0
    for p in server_processes(srv):
        try:
            t = p.cpu_times()
            total += t.user + t.system
        except Exception:
            continue
    return total


def _tokens(target: Target, srv, ns: str) -> dict[str, str]:
    """Admin, ServiceAccount and Django-user tokens; the latter two may
    get/list/watch ConfigMaps in ``ns`` only."""
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    _request(target, "POST", f"{rbac}/namespaces/{ns}/roles", {
        "metadata": {"name": "cm-watch"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}],
    })
    _request(target, "POST", f"/api/v1/namespaces/{ns}/serviceaccounts", {"metadata": {"name": "watcher"}})
    sa = _request(target, "POST", f"/api/v1/namespaces/{ns}/serviceaccounts/watcher/token", {"spec": {}})
    out = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "kubeconfig", "--data-dir", str(srv.data_dir), "--user", "bench-user"],
        capture_output=True, text=True, check=True, cwd=ROOT,
    ).stdout
    django = yaml.safe_load(out)["users"][0]["user"]["token"]
    _request(target, "POST", f"{rbac}/namespaces/{ns}/rolebindings", {
        "metadata": {"name": "cm-watch"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-watch"},
        "subjects": [
            {"kind": "ServiceAccount", "name": "watcher", "namespace": ns},
            {"kind": "User", "name": "bench-user", "apiGroup": "rbac.authorization.k8s.io"},
        ],
    })
    time.sleep(0.5)
    return {"admin": target.token, "serviceaccount": sa["status"]["token"], "django": django}


def _writer(target: Target, ns: str, prefix: str, writes: int, rate: float, out: list) -> None:
    conn = target.connection()
    next_at = time.monotonic()
    for i in range(writes):
        next_at += 1.0 / rate
        body = json.dumps({"metadata": {"name": f"{prefix}-{i}"}}).encode()
        conn.request("POST", f"/api/v1/namespaces/{ns}/configmaps", body=body, headers=target.headers())
        resp = conn.getresponse()
        raw = resp.read()
        answered = time.monotonic()
        assert resp.status == 201, raw
        out.append((int(json.loads(raw)["metadata"]["resourceVersion"]), answered))
        delay = next_at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    conn.close()


def _churn(target: Target, ns: str, prefix: str, every: float, stop: threading.Event) -> None:
    i = 0
    while not stop.wait(every):
        i += 1
        _request(target, "POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings", {
            "metadata": {"name": f"{prefix}-other-{i}"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-watch"},
            "subjects": [{"kind": "User", "name": f"somebody-{i}", "apiGroup": "rbac.authorization.k8s.io"}],
        })


async def _run(target: Target, srv, ns: str, token: str, args, prefix: str, churn: bool) -> dict:
    start_rv = _request(target, "GET", f"/api/v1/namespaces/{ns}/configmaps?limit=1")["metadata"]["resourceVersion"]
    as_caller = Target(target.url, token, target.ca_path)
    ssl_ctx = ssl.create_default_context(cafile=target.ca_path)
    streams: list[list] = [[] for _ in range(args.watchers)]
    stop_at: list[int] = []
    path = f"/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={start_rv}"
    readies = [asyncio.Event() for _ in range(args.watchers)]
    tasks = []
    for i in range(args.watchers):
        tasks.append(asyncio.create_task(raw_watcher(as_caller, path, readies[i], streams[i], stop_at, ssl_ctx)))
        if i % 50 == 49:
            await asyncio.sleep(0.05)
    await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 300)
    stop = threading.Event()
    churner = threading.Thread(target=_churn, args=(target, ns, prefix, args.churn, stop), daemon=True)
    writes: list = []
    cpu0 = _cpu(srv)
    if churn:
        churner.start()
    await asyncio.to_thread(_writer, target, ns, prefix, args.writes, args.rate, writes)
    stop_at.append(writes[-1][0])
    stop.set()
    await asyncio.to_thread(_writer, target, ns, prefix + "-sentinel", 1, 1.0, [])
    await asyncio.wait_for(asyncio.gather(*tasks), 120)
    cpu = _cpu(srv) - cpu0
    written = dict(writes)
    delays = [t - written[rv] for s in streams for _k, rv, t in s if rv in written]
    figures = check_streams(streams, [("ADDED", rv) for rv, _ in writes])
    return {
        "missed": figures["missed"],
        "deliveries": len(delays),
        "server_cpu_us_per_event": round(cpu / max(1, len(delays)) * 1e6, 1),
        "p50_ms": round(percentile(delays, 50) * 1000, 1),
        "p99_ms": round(percentile(delays, 99) * 1000, 1),
    }


async def main(args) -> dict:
    out: dict = {"watchers": args.watchers, "writes": args.writes, "rate": args.rate, "churn_s": args.churn}
    with serve(workers=1) as (target, srv):
        ns = "bench"
        _request(target, "POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
        tokens = _tokens(target, srv, ns)
        for churn in (False, True):
            for kind, token in tokens.items():
                name = f"{kind}{'+churn' if churn else ''}"
                out[name] = await _run(target, srv, ns, token, args, name.replace("+", "-"), churn)
                print(name, out[name], file=sys.stderr)
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--watchers", type=int, default=200)
    parser.add_argument("--writes", type=int, default=200)
    parser.add_argument("--rate", type=float, default=40.0)
    parser.add_argument("--churn", type=float, default=0.5)
    print(json.dumps(asyncio.run(main(parser.parse_args())), indent=1))
