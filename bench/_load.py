"""Shared helpers for the benchmarks: a server to measure, and a load generator.

The load generator runs N client threads split over several processes (one
keep-alive HTTPS connection per thread), so that the GIL of one Python process
does not cap the request rate; it reports per-request latencies.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import multiprocessing
import ssl
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

__all__ = ["Target", "django_user", "percentile", "run_load", "server", "summary"]


class Target:
    def __init__(self, url: str, token: str, ca_path: str) -> None:
        self.url = url
        self.token = token
        self.ca_path = ca_path

    def connection(self) -> http.client.HTTPConnection:
        parts = urlsplit(self.url)
        if parts.scheme == "https":
            ctx = ssl.create_default_context(cafile=self.ca_path)
            return http.client.HTTPSConnection(parts.hostname, parts.port, context=ctx, timeout=60)
        return http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)

    def headers(self, content_type: str = "application/json") -> dict:
        return {
            "Authorization": f"Bearer {self.token}",
            "Content-Type": content_type,
            "Accept": "application/json",
        }


@contextlib.contextmanager
def server(kubeconfig: str | None = None):
    """A Target: the server in ``kubeconfig``, or a fresh ``serve`` for the run."""
    if kubeconfig:
        import base64

        import yaml

        doc = yaml.safe_load(Path(kubeconfig).read_text())
        cluster = doc["clusters"][0]["cluster"]
        ca = tempfile.NamedTemporaryFile("wb", suffix=".crt", delete=False)
        ca.write(base64.b64decode(cluster["certificate-authority-data"]))
        ca.close()
        yield Target(cluster["server"], doc["users"][0]["user"]["token"], ca.name), None
        return
    from kapi_testserver import start_server, stop_server

    with tempfile.TemporaryDirectory(prefix="kapi-bench-") as tmp:
        srv = start_server(Path(tmp) / "data")
        try:
            yield Target(srv.url, srv.token, str(srv.ca_path)), srv
        finally:
            stop_server(srv)


def django_user(srv, target: Target, name: str, clusterrole: str = "edit", namespace: str = "default") -> Target:
    """A Target for the non-admin Django user ``name`` (``manage.py kubeconfig
    --user``), bound to ``clusterrole`` in ``namespace``: every request then goes
    through the Django-user token path and RBAC instead of the admin static token."""
    import subprocess

    import yaml

    out = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "kubeconfig", "--data-dir", str(srv.data_dir), "--user", name],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    token = yaml.safe_load(out)["users"][0]["user"]["token"]
    binding = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": f"bench-{name}"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": clusterrole},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name}],
    }
    conn = target.connection()
    conn.request(
        "POST",
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings",
        body=json.dumps(binding).encode(),
        headers=target.headers(),
    )
    response = conn.getresponse()
    response.read()
    conn.close()
    if response.status != 201:
        raise SystemExit(f"could not bind {name}: {response.status}")
    user = Target(target.url, token, target.ca_path)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # RBAC reaches every API process within 0.25 s
        conn = user.connection()
        conn.request("GET", f"/api/v1/namespaces/{namespace}/configmaps?limit=1", headers=user.headers())
        ok = conn.getresponse()
        ok.read()
        conn.close()
        if ok.status == 200:
            time.sleep(0.6)  # and every other API process too
            return user
        time.sleep(0.1)
    raise SystemExit(f"{name} was not allowed in time")


def _worker(target: Target, requests: list, threads: int, out) -> None:
    chunks = [requests[i::threads] for i in range(threads)]
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def run(chunk):
        conn = target.connection()
        local: list[float] = []
        for method, path, body, content_type, ok in chunk:
            data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
            start = time.perf_counter()
            conn.request(method, path, body=data, headers=target.headers(content_type))
            response = conn.getresponse()
            payload = response.read()
            local.append(time.perf_counter() - start)
            if response.status not in ok:
                with lock:
                    errors.append(f"{method} {path}: {response.status} {payload[:200]!r}")
        conn.close()
        with lock:
            latencies.extend(local)

    ts = [threading.Thread(target=run, args=(c,)) for c in chunks if c]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    out.put((latencies, errors))


def run_load(target: Target, requests: list, clients: int = 16, processes: int = 2) -> dict:
    """Run ``requests`` ((method, path, body, content_type, ok_codes) tuples) over
    ``clients`` connections; returns throughput and latency figures."""
    per_proc = [requests[i::processes] for i in range(processes)]
    queue: multiprocessing.Queue = multiprocessing.Queue()
    procs = [
        multiprocessing.Process(target=_worker, args=(target, chunk, clients // processes, queue))
        for chunk in per_proc
    ]
    start = time.perf_counter()
    for p in procs:
        p.start()
    latencies: list[float] = []
    errors: list[str] = []
    for _ in procs:
        lat, err = queue.get()
        latencies.extend(lat)
        errors.extend(err)
    elapsed = time.perf_counter() - start
    for p in procs:
        p.join()
    return {
        "requests": len(latencies),
        "errors": errors,
        "seconds": elapsed,
        "rate": len(latencies) / elapsed if elapsed else 0.0,
        "p50_ms": percentile(latencies, 50) * 1000,
        "p99_ms": percentile(latencies, 99) * 1000,
        "mean_ms": statistics.fmean(latencies) * 1000 if latencies else 0.0,
    }


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(pct / 100 * len(ordered))) - 1))
    return ordered[index]


def summary(name: str, figures: dict) -> str:
    line = (
        f"{name}: {figures['requests']} requests in {figures['seconds']:.2f}s = "
        f"{figures['rate']:.0f}/s, p50 {figures['p50_ms']:.1f} ms, p99 {figures['p99_ms']:.1f} ms"
    )
    if figures["errors"]:
        line += f", {len(figures['errors'])} errors (first: {figures['errors'][0]})"
    return line
