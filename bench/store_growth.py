"""How the cost of writes and lists grows with the store (issue #33).

    python bench/store_growth.py [--sizes 10000,500000] [--creates 2000] [--list-count 10000]
        [--list-cache-max N] [--kube-work-dir KDIR] [--out FILE]

Starts a fresh ``serve`` on the embedded defaults, and for each size in turn
grows the store to that many 1 KiB ConfigMaps (namespace ``growth-fill``,
written straight into PostgreSQL in batches of 10,000: the object rows and
their change-log rows, as the API's create statement writes them, so that
watch caches stay consistent; filling 500,000 through the API would take
longer than the figures it is for), then measures, with kbench (the shared
ruler, ``../shared/bench/kbench.py``):

* ``create``: c=16, ``--creates`` ConfigMaps, creates/s and server CPU per create;
* ``list``: ``--list-count`` ConfigMaps in a namespace of their own, consistent
  and ``resourceVersion=0``, median ms;
* a cluster-wide ``resourceVersion=0`` list of every ConfigMap (the list
  cache's worst case: it keeps at most ``KAPI_LIST_CACHE_MAX_OBJECTS`` objects,
  ``--list-cache-max`` sets it for the run);
* the resident memory of each API process afterwards.

The server's CPU is every process of ``serve`` (its children), PostgreSQL
and Redis, as ``bench/kbench_table.py`` passes them.

``--kube-work-dir`` measures the reference started by
``bench/kube_reference.py`` instead (its three processes' CPU; the memory of
kube-apiserver and etcd). Its store is grown the same way, straight into etcd
(transactions of 128 puts through etcd's JSON gateway, the objects as JSON,
which kube-apiserver's storage decoder reads as it reads protobuf), and
kube-apiserver's watch cache takes them in from its etcd watch as it would
any write.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from kbench_table import _find_kbench, server_pids, warm_watch_caches, write_kubeconfig  # noqa: E402

FILL_NAMESPACE = "growth-fill"
BATCH = 10_000

_FILL = """
WITH g AS (
  SELECT n, gen_random_uuid() AS uid, kapi_next_rv() AS rv
  FROM generate_series(%(first)s::int, %(last)s::int) AS n
),
o AS (
  INSERT INTO kapi_object ("group", resource, namespace, name, uid, resource_version, data, labels)
  SELECT '', 'configmaps', %(ns)s::text, 'fill-' || n, uid, rv,
         jsonb_build_object(
           'apiVersion', 'v1', 'kind', 'ConfigMap',
           'metadata', jsonb_build_object('name', 'fill-' || n, 'namespace', %(ns)s::text, 'uid', uid,
                                          'creationTimestamp', %(now)s::text),
           'data', jsonb_build_object('payload', repeat('x', 1024))),
         '{}'::jsonb
  FROM g
  RETURNING "group", resource, namespace, name, uid, resource_version, data
)
INSERT INTO kapi_change (resource_version, "group", resource, namespace, name, uid, type, data)
SELECT resource_version, "group", resource, namespace, name, uid, 'ADDED', data FROM o
"""


def database_url(data_dir: Path) -> str:
    from kapi.runtime.config import _embedded_postgres_url

    return _embedded_postgres_url(data_dir / "postgres")


def stored(url: str) -> int:
    import psycopg

    with psycopg.connect(url, autocommit=True) as db:
        return db.execute("SELECT count(*) FROM kapi_object").fetchone()[0]


def grow(url: str, to: int) -> float:
    """Add ConfigMaps to ``FILL_NAMESPACE`` until the store holds ``to`` objects; seconds taken."""
    import psycopg

    started = time.monotonic()
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with psycopg.connect(url, autocommit=True) as db:
        have = db.execute("SELECT count(*) FROM kapi_object").fetchone()[0]
        first = db.execute(
            "SELECT count(*) FROM kapi_object WHERE resource = 'configmaps' AND namespace = %s", [FILL_NAMESPACE]
        ).fetchone()[0]
        while have < to:
            n = min(BATCH, to - have)
            db.execute(_FILL, {"first": first, "last": first + n - 1, "ns": FILL_NAMESPACE, "now": now})
            first += n
            have += n
        # What a store that grew over time would have behind it: its rows
        # vacuumed (else autovacuum's pass over the fill, and the checkpoint
        # of its pages, run during the measurements: creates measured 15%
        # dearer at 500,000 that way, and no dearer once they were done).
        db.execute("VACUUM (ANALYZE) kapi_object")
        db.execute("VACUUM (ANALYZE) kapi_change")
        db.execute("CHECKPOINT")
    return time.monotonic() - started


class KubeReference:
    """The reference of ``bench/kube_reference.py``: its kubeconfig, processes and etcd."""

    TXN_OPS = 128  # etcd's --max-txn-ops default

    def __init__(self, work: Path) -> None:
        self.work = work
        self.kubeconfig = str(work / "kubeconfig")
        started = json.loads((work / "pids.json").read_text())
        self.pids = started["pids"]
        self.etcd = started.get("etcd", "http://127.0.0.1:2379")

    def _etcd(self, path: str, body: dict) -> dict:
        request = urllib.request.Request(
            self.etcd + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())

    def stored(self) -> int:
        prefix = b"/registry/"
        end = prefix[:-1] + bytes([prefix[-1] + 1])
        answer = self._etcd("/v3/kv/range", {
            "key": base64.b64encode(prefix).decode(), "range_end": base64.b64encode(end).decode(),
            "count_only": True,
        })
        return int(answer.get("count", 0))

    def grow(self, to: int) -> float:
        import uuid

        started = time.monotonic()
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        have = self.stored()
        first = have
        while have < to:
            ops = []
            for n in range(first, first + min(self.TXN_OPS, to - have)):
                name = f"fill-{n}"
                obj = {
                    "kind": "ConfigMap", "apiVersion": "v1",
                    "metadata": {"name": name, "namespace": FILL_NAMESPACE, "uid": str(uuid.uuid4()),
                                 "creationTimestamp": now},
                    "data": {"payload": "x" * 1024},
                }
                key = f"/registry/configmaps/{FILL_NAMESPACE}/{name}".encode()
                ops.append({"requestPut": {
                    "key": base64.b64encode(key).decode(),
                    "value": base64.b64encode(json.dumps(obj).encode()).decode(),
                }})
            self._etcd("/v3/kv/txn", {"success": ops})
            first += len(ops)
            have += len(ops)
        return time.monotonic() - started

    def rss(self) -> dict[str, float]:
        out = {}
        for pid in self.pids:
            try:
                name = Path(f"/proc/{pid}/comm").read_text().strip()
                status = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            rss = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
            out[name] = round(rss / 1024, 1)
        return out


def kbench(kubeconfig: str, data_dir: Path | None, bench: str, *extra: str, pids: list[int] | None = None) -> dict:
    pids = ",".join(map(str, pids if pids is not None else server_pids(data_dir)))
    python = os.environ.get("KBENCH_PYTHON", "/tmp/kbench-venv/bin/python")
    cmd = [python, _find_kbench(), bench, "--kubeconfig", kubeconfig, "--server-pids", pids, *extra]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    for line in done.stdout.splitlines():
        if line.startswith('{"bench"'):
            return json.loads(line)
    raise RuntimeError(f"kbench {bench} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")


def cluster_list_ms(kubeconfig: str) -> tuple[float, int]:
    import yaml

    config = yaml.safe_load(Path(kubeconfig).read_text())
    cluster = config["clusters"][0]["cluster"]
    context = ssl.create_default_context()
    with tempfile.NamedTemporaryFile("wb", suffix=".crt") as ca:
        ca.write(base64.b64decode(cluster["certificate-authority-data"]))
        ca.flush()
        context.load_verify_locations(ca.name)
    url = cluster["server"].rstrip("/") + "/api/v1/configmaps?resourceVersion=0"
    headers = {"Authorization": f"Bearer {config['users'][0]['user']['token']}"}
    started = time.monotonic()
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), context=context, timeout=600) as r:
        body = r.read()
    return (time.monotonic() - started) * 1000, len(body)


def api_process_rss(data_dir: Path) -> list[float]:
    """Resident MiB of each API process (serve's uvicorn workers)."""
    out = []
    for pid in server_pids(data_dir):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        if any(k in cmdline for k in ("postgres", "redis", "celery", "resource_tracker")):
            continue
        if "multiprocessing" not in cmdline and "uvicorn" not in cmdline and "spawn_main" not in cmdline:
            continue
        rss = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
        out.append(round(rss / 1024, 1))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,500000")
    parser.add_argument("--creates", type=int, default=2000)
    parser.add_argument("--list-count", type=int, default=10000)
    parser.add_argument("--list-cache-max", type=int, default=None)
    parser.add_argument("--kube-work-dir", type=Path, default=None,
                        help="measure the reference of bench/kube_reference.py instead")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    if args.kube_work_dir is not None:
        rows = [measure_kube(KubeReference(args.kube_work_dir), args, int(s)) for s in args.sizes.split(",")]
        _print(rows)
        return 0
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
    sys.path.insert(0, str(ROOT))
    from kapi_testserver import start_server, stop_server

    if args.list_cache_max is not None:
        os.environ["KAPI_LIST_CACHE_MAX_OBJECTS"] = str(args.list_cache_max)
    rows = []
    with tempfile.TemporaryDirectory(prefix="kapi-growth-") as tmp:
        data_dir = Path(tmp) / "data"
        srv = start_server(data_dir)
        try:
            kubeconfig = write_kubeconfig(data_dir)
            url = database_url(data_dir)
            subprocess.run([str(ROOT / ".venv/bin/kubectl"), "--kubeconfig", kubeconfig, "create", "namespace",
                            FILL_NAMESPACE], check=True, capture_output=True)
            for size in [int(s) for s in args.sizes.split(",")]:
                took = grow(url, size)
                warm_watch_caches(kubeconfig)
                kbench(kubeconfig, data_dir, "create", "-n", "300", "-c", "16")  # every request thread connected
                create = kbench(kubeconfig, data_dir, "create", "-n", str(args.creates), "-c", "16")
                listed = kbench(kubeconfig, data_dir, "list", "--count", str(args.list_count), "--runs", "5")
                whole_ms, whole_bytes = cluster_list_ms(kubeconfig)
                row = {
                    "stored": stored(url), "fill_s": round(took, 1),
                    "create_per_s": create["metrics"].get("create_per_s"),
                    "create_cpu_ms": create["metrics"].get("server_cpu_ms_per_op"),
                    "list_metrics": {k: v for k, v in listed["metrics"].items() if "ms" in k},
                    "cluster_list_rv0_ms": round(whole_ms), "cluster_list_mb": round(whole_bytes / 2**20, 1),
                    "api_rss_mib": api_process_rss(data_dir),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
                if args.out:
                    with open(args.out, "a") as f:
                        f.write(json.dumps(row) + "\n")
        finally:
            stop_server(srv)
    _print(rows)
    return 0


def measure_kube(kube: KubeReference, args, size: int) -> dict:
    subprocess.run([str(ROOT / ".venv/bin/kubectl"), "--kubeconfig", kube.kubeconfig, "create", "namespace",
                    FILL_NAMESPACE], capture_output=True)
    took = kube.grow(size)
    time.sleep(5)  # kube-apiserver's watch cache takes the fill in from its etcd watch
    create = kbench(kube.kubeconfig, None, "create", "-n", str(args.creates), "-c", "16", pids=kube.pids)
    listed = kbench(kube.kubeconfig, None, "list", "--count", str(args.list_count), "--runs", "5", pids=kube.pids)
    whole_ms, whole_bytes = cluster_list_ms(kube.kubeconfig)
    row = {
        "stored": kube.stored(), "fill_s": round(took, 1),
        "create_per_s": create["metrics"].get("create_per_s"),
        "create_cpu_ms": create["metrics"].get("server_cpu_ms_per_op"),
        "list_metrics": {k: v for k, v in listed["metrics"].items() if "ms" in k},
        "cluster_list_rv0_ms": round(whole_ms), "cluster_list_mb": round(whole_bytes / 2**20, 1),
        "api_rss_mib": kube.rss(),
    }
    print(json.dumps(row), flush=True)
    if args.out:
        with open(args.out, "a") as f:
            f.write(json.dumps({"server": "kube", **row}) + "\n")
    return row


def _print(rows: list[dict]) -> None:
    print("\nstored | create/s | CPU ms/create | list ms (consistent, rv=0) | all ConfigMaps rv=0 | RSS MiB")
    for row in rows:
        m = row["list_metrics"]
        lists = ", ".join(f"{k} {v:.0f}" for k, v in sorted(m.items()) if isinstance(v, (int, float)) and "p50" in k)
        print(f"{row['stored']:,} | {row['create_per_s']} | {row['create_cpu_ms']} | {lists} | "
              f"{row['cluster_list_rv0_ms']} ms ({row['cluster_list_mb']} MiB) | {row['api_rss_mib']}")


if __name__ == "__main__":
    sys.exit(main())
