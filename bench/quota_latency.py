"""How long a ResourceQuota's ``status.used`` takes to reflect a write.

Against a running server (``--kubeconfig``) or a fresh ``serve``: a namespace
with a quota on ConfigMaps; then ``-n`` times, a ConfigMap is created and the
quota read until ``status.used.configmaps`` counts it (quota admission charges
it in the create's own transaction, as kube's does), then deleted and the quota
read until it is released (the controller recounts: the delete wakes the
feed, the runtime reconciles the quota). Prints median and p90 of both, in
milliseconds (kube: under a second), with the create request's own time
for comparison (one GET more is the rest).

    .venv/bin/python bench/quota_latency.py --kubeconfig /tmp/quota/kc -n 30
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.append(str(Path(__file__).resolve().parent.parent / "tests"))

from _load import Target, server


def _request(target: Target, method: str, path: str, body=None):
    conn = target.connection()
    conn.request(method, path, body=json.dumps(body).encode() if body is not None else None, headers=target.headers())
    response = conn.getresponse()
    payload = response.read()
    conn.close()
    return response.status, (json.loads(payload) if payload else None)


def _used(target: Target, path: str) -> str | None:
    _, quota = _request(target, "GET", path)
    return ((quota.get("status") or {}).get("used") or {}).get("configmaps")


def _until_used(target: Target, path: str, value: str, start: float, timeout: float = 30.0) -> float:
    while True:
        if _used(target, path) == value:
            return time.perf_counter() - start
        if time.perf_counter() - start > timeout:
            raise SystemExit(f"status.used never reached {value} (it says {_used(target, path)})")
        time.sleep(0.002)


def _summary(what: str, seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p90 = ms[min(len(ms) - 1, int(round(0.9 * (len(ms) - 1))))]
    return f"{what}: median {statistics.median(ms):.1f} ms, p90 {p90:.1f} ms over {len(ms)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kubeconfig")
    parser.add_argument("-n", type=int, default=30)
    args = parser.parse_args()
    with server(args.kubeconfig) as (target, _):
        ns = f"quota-bench-{uuid.uuid4().hex[:6]}"
        _request(target, "POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
        base = f"/api/v1/namespaces/{ns}"
        # The namespace's own kube-root-ca.crt counts: let it be made first.
        deadline = time.perf_counter() + 10
        while _request(target, "GET", f"{base}/configmaps/kube-root-ca.crt")[0] != 200:
            if time.perf_counter() > deadline:
                break
            time.sleep(0.01)
        _request(target, "POST", f"{base}/resourcequotas", {"metadata": {"name": "q"}, "spec": {"hard": {"configmaps": "1000"}}})
        quota = f"{base}/resourcequotas/q"
        while _used(target, quota) is None:
            time.sleep(0.01)
        time.sleep(1)
        settled = int(_used(target, quota))
        one_more, back = str(settled + 1), str(settled)
        created, posts, released = [], [], []
        try:
            for i in range(args.n):
                start = time.perf_counter()
                status, _ = _request(target, "POST", f"{base}/configmaps", {"metadata": {"name": f"c{i}"}})
                assert status == 201, status
                posts.append(time.perf_counter() - start)
                created.append(_until_used(target, quota, one_more, start))
                start = time.perf_counter()
                status, _ = _request(target, "DELETE", f"{base}/configmaps/c{i}")
                assert status == 200, status
                released.append(_until_used(target, quota, back, start))
        finally:
            _request(target, "DELETE", f"/api/v1/namespaces/{ns}")
        print(_summary("create request alone", posts))
        print(_summary("create -> status.used", created))
        print(_summary("delete -> status.used (controller)", released))


if __name__ == "__main__":
    main()
