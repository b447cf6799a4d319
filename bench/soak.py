"""Soak: a fresh ``serve`` under steady mixed churn; does anything grow?

    python bench/soak.py [--minutes 30] [--sample 1] [--rate 20] [--syncs 3]

Churn, all at once for the whole run:

* writers: ``--rate`` requests/s over 300 ConfigMap names in one namespace
  (create when absent, else update or delete), and every 30 s a namespace
  with 5 ConfigMaps created while the one of a minute ago is deleted;
* ``--syncs`` hosted GitRepositories with a Sync each, every minute a push
  (a changed value, and a renamed ConfigMap so that the Sync prunes); every
  5 minutes the oldest pair is deleted and a new one created;
* watchers: 4 at a time, each watching ConfigMaps for 5-30 s, then another.

Every ``--sample`` minutes it prints one JSON line: the data directory's size
(and its parts), PostgreSQL's size and its largest tables, change-log rows,
files in the metrics directory, the ``/metrics`` scrape (bytes, seconds), each
kind of process's resident memory, and the request p50/p99 of the window.
At the end: each figure at minute 10 (or a third of the run when shorter) and
at the end with their ratio, and the request p99 of the first window, the
window ending at minute 10 and the last one.

The audit log is rotated at 1 MiB with 2 backups for the run
(``KAPI_AUDIT_LOG_MAXSIZE``/``MAXBACKUP``): its bound (3 MiB) is then reached
within minutes; the defaults (100 MiB x 6 files) bound it the same way, later.
Each API process's watch cache keeps up to ``KAPI_WATCH_CACHE_EVENTS`` (10,000)
events per resource, so its memory grows until that many ConfigMap events
have been written (about 20 minutes at this churn), then stays.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402
import psycopg  # noqa: E402
from kapi_testserver import server_processes, start_server, stop_server  # noqa: E402
from sync_gitops import Work  # noqa: E402

from kapi.runtime import config  # noqa: E402

API = "sync.kapi.dev/v1"
NS = "soak"


class Client:
    """urllib over HTTPS with the admin token; records (time, seconds, code)."""

    def __init__(self, server) -> None:
        self.server = server
        self.context = ssl.create_default_context(cafile=str(server.ca_path))
        self.samples: list[tuple[float, float, int]] = []
        self.lock = threading.Lock()

    def request(self, method: str, path: str, body: dict | None = None, record: bool = True,
                content_type: str = "application/json", timeout: float = 60) -> tuple[int, bytes]:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.server.url + path, data=data, method=method, headers={
            "Authorization": f"Bearer {self.server.token}", "Content-Type": content_type})
        started = time.monotonic()
        try:
            with urllib.request.urlopen(req, context=self.context, timeout=timeout) as response:
                code, payload = response.status, response.read()
        except urllib.error.HTTPError as exc:
            code, payload = exc.code, exc.read()
        except OSError:
            code, payload = 0, b""
        if record:
            with self.lock:
                self.samples.append((time.time(), time.monotonic() - started, code))
        return code, payload


def cm(name: str, value: str, namespace: str | None = None) -> dict:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"v": value}}


def writer(client: Client, stop: threading.Event, rate: float) -> None:
    base = f"/api/v1/namespaces/{NS}/configmaps"
    present: set[str] = set()
    names = [f"c{i}" for i in range(300)]
    while not stop.is_set():
        tick = time.monotonic()
        name = random.choice(names)
        if name not in present:
            code, _ = client.request("POST", base, cm(name, "0"))
            if code in (201, 409):
                present.add(name)
        elif random.random() < 0.7:
            client.request("PATCH", f"{base}/{name}", {"data": {"v": str(random.random())}},
                           content_type="application/merge-patch+json")
        else:
            client.request("DELETE", f"{base}/{name}")
            present.discard(name)
        stop.wait(max(0.0, 1 / rate - (time.monotonic() - tick)))


def namespaces(client: Client, stop: threading.Event) -> None:
    made: list[str] = []
    n = 0
    while not stop.is_set():
        name = f"soak-ns-{n}"
        n += 1
        client.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                      "metadata": {"name": name}})
        for i in range(5):
            client.request("POST", f"/api/v1/namespaces/{name}/configmaps", cm(f"x{i}", "1"))
        made.append(name)
        if len(made) > 2:
            client.request("DELETE", f"/api/v1/namespaces/{made.pop(0)}")
        stop.wait(30)


def watchers(client: Client, stop: threading.Event, slot: int) -> None:
    while not stop.is_set():
        seconds = random.randint(5, 30)
        client.request("GET", f"/api/v1/namespaces/{NS}/configmaps?watch=1&timeoutSeconds={seconds}",
                       record=False, timeout=seconds + 30)


class Syncs:
    def __init__(self, client: Client, server, tmp: Path, count: int) -> None:
        self.client, self.server, self.tmp = client, server, tmp
        self.pairs: list[tuple[str, Work]] = []
        self.n = 0
        self.generation = 0
        for _ in range(count):
            self.add()

    def add(self) -> None:
        name = f"app{self.n}"
        self.n += 1
        base = f"/apis/{API}/namespaces/{NS}"
        self.client.request("POST", f"{base}/gitrepositories", {
            "apiVersion": API, "kind": "GitRepository", "metadata": {"name": name}, "spec": {}})
        self.client.request("POST", f"{base}/syncs", {
            "apiVersion": API, "kind": "Sync", "metadata": {"name": name},
            "spec": {"sourceRef": {"name": name}, "path": "./deploy", "prune": True}})
        work = Work(self.server, NS, name, self.tmp / name)
        self.pairs.append((name, work))
        self.push(name, work)

    def push(self, name: str, work: Work) -> None:
        self.generation += 1
        for old in (work.path / "deploy").glob("*.yaml") if (work.path / "deploy").exists() else []:
            old.unlink()
        work.write(f"deploy/{name}-{self.generation % 3}.yaml",
                   cm(f"{name}-g{self.generation % 3}", str(self.generation), NS),
                   cm(f"{name}-fixed", str(self.generation), NS))
        work.push(f"generation {self.generation}", check=False)

    def retire(self) -> None:
        name, work = self.pairs.pop(0)
        base = f"/apis/{API}/namespaces/{NS}"
        self.client.request("DELETE", f"{base}/syncs/{name}")
        self.client.request("DELETE", f"{base}/gitrepositories/{name}")
        subprocess.run(["rm", "-rf", str(work.path)], check=False)

    def run(self, stop: threading.Event) -> None:
        minute = 0
        while not stop.wait(60):
            minute += 1
            for name, work in list(self.pairs):
                self.push(name, work)
            if minute % 5 == 0:
                self.retire()
                self.add()


def du(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_blocks * 512
            except OSError:
                pass
    return total


def sample(client: Client, server, since: float) -> dict:
    data = server.data_dir
    parts = {p.name: du(p) for p in data.iterdir() if p.is_dir()}
    parts["audit*.log"] = sum(p.stat().st_size for p in data.glob("audit*.log"))
    started = time.monotonic()
    code, body = client.request("GET", "/metrics", record=False)
    scrape = time.monotonic() - started
    with psycopg.connect(config._embedded_postgres_url(data / "postgres"), autocommit=True) as db:
        tables = db.execute(
            "SELECT relname, pg_total_relation_size(relid), n_live_tup, n_dead_tup"
            " FROM pg_stat_user_tables ORDER BY 2 DESC LIMIT 8").fetchall()
        db_size = db.execute("SELECT pg_database_size(current_database())").fetchone()[0]
        changes = db.execute("SELECT count(*) FROM kapi_change").fetchone()[0]
    memory: dict[str, int] = {}
    procs = {p.pid: p for p in server_processes(server)}
    for proc in list(procs.values()):  # PostgreSQL's backends are the postmaster's children
        if "postgres" in proc.name():
            with contextlib.suppress(psutil.Error):
                procs.update({c.pid: c for c in proc.children(recursive=True)})
    for proc in procs.values():
        try:
            line = " ".join(proc.cmdline())
            rss = proc.memory_info().rss
        except psutil.Error:
            continue
        kind = ("postgres" if "postgres" in proc.name() else "redis" if "redis" in proc.name()
                else "celery" if "celery" in line else "uvicorn" if "uvicorn" in line
                or "kapi.runtime.apiserver" in line or "multiprocessing" in line else "serve" if "serve" in line else proc.name())
        memory[kind] = memory.get(kind, 0) + rss
    with client.lock:
        window = [s for s in client.samples if s[0] >= since]
    latencies = sorted(s[1] for s in window)
    return {
        "data_dir_mb": round(du(data) / 1e6, 2),
        "parts_mb": {k: round(v / 1e6, 2) for k, v in sorted(parts.items())},
        "db_mb": round(db_size / 1e6, 2),
        "tables_mb": {t[0]: round(t[1] / 1e6, 2) for t in tables},
        "dead_tuples": {t[0]: t[3] for t in tables if t[3]},
        "change_rows": changes,
        "metrics_files": len(list((data / "metrics").glob("*.db"))),
        "scrape_kb": round(len(body) / 1e3, 1) if code == 200 else None,
        "scrape_s": round(scrape, 3),
        "rss_mb": {k: round(v / 1e6, 1) for k, v in sorted(memory.items())},
        "requests": len(window),
        "errors": sum(1 for s in window if s[2] == 0 or s[2] >= 500),
        "p50_ms": round(latencies[len(latencies) // 2] * 1e3, 1) if latencies else None,
        "p99_ms": round(latencies[int(len(latencies) * 0.99)] * 1e3, 1) if latencies else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--sample", type=float, default=1, help="minutes between samples")
    parser.add_argument("--rate", type=float, default=20, help="ConfigMap writes per second")
    parser.add_argument("--syncs", type=int, default=3)
    args = parser.parse_args()
    env = {**os.environ, "KAPI_AUDIT_LOG_MAXSIZE": "1", "KAPI_AUDIT_LOG_MAXBACKUP": "2",
           "KAPI_REQUEST_LOG": "0"}
    with tempfile.TemporaryDirectory(prefix="kapi-soak-") as tmp:
        server = start_server(Path(tmp) / "data", env=env)
        os.environ["KAPI_DATA_DIR"] = str(server.data_dir)
        stop = threading.Event()
        try:
            client = Client(server)
            client.request("POST", "/api/v1/namespaces",
                           {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
            work_dir = Path(tmp) / "work"
            work_dir.mkdir()
            syncs = Syncs(client, server, work_dir, args.syncs)
            threads = [threading.Thread(target=writer, args=(client, stop, args.rate)),
                       threading.Thread(target=namespaces, args=(client, stop)),
                       threading.Thread(target=syncs.run, args=(stop,))]
            threads += [threading.Thread(target=watchers, args=(client, stop, i)) for i in range(4)]
            for t in threads:
                t.daemon = True
                t.start()
            started = time.monotonic()
            rows: list[tuple[float, dict]] = []
            since = time.time()
            while time.monotonic() - started < args.minutes * 60:
                time.sleep(min(args.sample * 60, args.minutes * 60 - (time.monotonic() - started)))
                minute = (time.monotonic() - started) / 60
                row = sample(client, server, since)
                since = time.time()
                rows.append((minute, row))
                print(json.dumps({"minute": round(minute, 1), **row}), flush=True)
            stop.set()
            report(rows, args.minutes)
        finally:
            stop.set()
            stop_server(server)


def report(rows: list[tuple[float, dict]], minutes: float) -> None:
    warm = min(10.0, minutes / 3)
    base = min(rows, key=lambda r: abs(r[0] - warm))
    end = rows[-1]
    keys = ["data_dir_mb", "db_mb", "change_rows", "metrics_files", "scrape_kb", "scrape_s"]
    at = f"at_{base[0]:.0f}_min"
    summary = {k: {at: base[1][k], "end": end[1][k],
                   "ratio": round(end[1][k] / base[1][k], 3) if base[1][k] else None}
               for k in keys}
    for kind, mb in end[1]["rss_mb"].items():
        was = base[1]["rss_mb"].get(kind)
        summary[f"rss_mb.{kind}"] = {at: was, "end": mb,
                                     "ratio": round(mb / was, 3) if was else None}
    summary["p99_ms"] = {"first": rows[0][1]["p99_ms"], at: base[1]["p99_ms"], "end": end[1]["p99_ms"],
                         "ratio": round(end[1]["p99_ms"] / base[1]["p99_ms"], 3)}
    print("SUMMARY " + json.dumps(summary))


if __name__ == "__main__":
    main()
