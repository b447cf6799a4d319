"""The table of issue #15: kbench's workloads against a running kapi, with
kube-apiserver's figures beside them.

    python bench/kbench_table.py --data-dir DIR [--kubeconfig KC] [--rounds 3] [--quick]

Runs ``../shared/bench/kbench.py`` (the common ruler; ``--kbench`` elsewhere,
``--python`` for the interpreter that has its dependencies, by default
``/tmp/kbench-venv/bin/python`` if present) once per benchmark and round,
passing every process of the server that serves ``--data-dir`` (serve, its
children, PostgreSQL and Redis) as ``--server-pids``, and prints the medians:
throughput and server CPU per operation, which is the figure that holds on a
shared 2-core machine (throughput and latency move with the neighbours).
``--out FILE`` appends kbench's JSON lines.

Before the first benchmark, every API process is made to start its watch
cache (``--no-warm`` leaves them as they are): a process starts it at its
first watch or cached list, and from then on it reads the change log at every
announced write, about 0.4 ms of server CPU per write (bench/README.md, issue
#15 "Fourth pass"). Without this, a freshly started server measures cheaper
writes than the same server once anything has watched, and runs against a
fresh and a long-running server are not comparable. A short create run
then opens every request thread's database connection (kbench counts only
the processes alive when each run starts); ``--no-warm`` skips both.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: kube-apiserver 1.28 + etcd 3.5 on this machine class (../shared/bench/README.md).
KUBE = {
    "create": "1,473 /s; 1.05 ms",
    "merge-patch": "1,108 /s; 1.48 ms",
    "PUT": "986 /s; 1.58 ms",
    "apply create": "1,201 /s; 1.3 ms",
    "apply no-op": "1,441 /s; 1.1 ms",
    "apply change": "972 /s; 1.65 ms",
    "list 10,000 consistent": "241 ms",
    "list 10,000 resourceVersion=0": "80 ms",
    "list 10,000 paged by 500": "309 ms",
    "list 1% label selector": "116 ms",
    "watch-consistency 8 writers": "958 writes/s; 1.55 ms; 0 anomalies",
}

#: (row, benchmark, throughput metric, CPU metric) for the write rows.
WRITES = [
    ("create", "create", "create_per_s", "server_cpu_ms_per_op"),
    ("merge-patch", "update", "patch_per_s", "patch_server_cpu_ms_per_op"),
    ("PUT", "update", "put_per_s", "put_server_cpu_ms_per_op"),
    ("apply create", "apply", "apply_create_per_s", "apply_create_server_cpu_ms_per_op"),
    ("apply no-op", "apply", "apply_noop_per_s", "apply_noop_server_cpu_ms_per_op"),
    ("apply change", "apply", "apply_update_per_s", "apply_update_server_cpu_ms_per_op"),
]
#: watch-consistency's counts of wrong events (kbench's own definition of bad).
ANOMALIES = (
    "missing", "duplicates", "out_of_order", "unexpected", "type_mismatch", "content_mismatch",
    "lifecycle_violations", "missing_deletes", "final_state_mismatch",
)
LISTS = [
    ("list 10,000 consistent", "list_full_p50_ms", "list_full_server_cpu_ms_per_op"),
    ("list 10,000 resourceVersion=0", "list_full_rv0_p50_ms", "list_full_rv0_server_cpu_ms_per_op"),
    ("list 10,000 paged by 500", "list_paged_total_p50_ms", None),
    ("list 1% label selector", "list_selector_1pct_p50_ms", "list_selector_1pct_server_cpu_ms_per_op"),
]


def server_pids(data_dir: Path) -> list[int]:
    """serve for ``data_dir`` and its descendants, PostgreSQL and Redis."""
    needle = str(data_dir.resolve())
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if needle in cmdline and ("manage.py serve" in cmdline or "postgres" in cmdline or "redis-server" in cmdline):
            pids.append(int(entry))
    children: list[int] = []
    todo = list(pids)
    while todo:
        pid = todo.pop()
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                kids = Path(f"/proc/{pid}/task/{task}/children").read_text().split()
                for kid in map(int, kids):
                    if kid not in pids and kid not in children:
                        children.append(kid)
                        todo.append(kid)
        except OSError:
            continue
    return sorted(set(pids + children))


def _find_kbench() -> str:
    """``shared/bench/kbench.py`` beside the checkout (or beside its parent, for a worktree)."""
    for base in (ROOT.parent, ROOT.parent.parent):
        candidate = base / "shared" / "bench" / "kbench.py"
        if candidate.exists():
            return str(candidate)
    return str(ROOT.parent / "shared" / "bench" / "kbench.py")


def run(args, bench: str, extra: list[str]) -> dict | None:
    pids = ",".join(map(str, server_pids(Path(args.data_dir))))
    cmd = [args.python, args.kbench, bench, "--kubeconfig", args.kubeconfig, "--server-pids", pids, *extra]
    if args.quick:
        cmd.append("--quick")
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    for line in done.stdout.splitlines():
        if line.startswith('{"bench"'):
            if args.out:
                with open(args.out, "a") as f:
                    f.write(line + "\n")
            record = json.loads(line)
            print(f"  {bench}: ok={record['ok']} errors={record['errors']}", file=sys.stderr)
            return record
    print(f"  {bench} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}", file=sys.stderr)
    return None


def write_kubeconfig(data_dir: Path) -> str:
    """The admin kubeconfig of the kapi serving ``data_dir``, written beside its
    data as ``kbench.kubeconfig``; its path."""
    path = data_dir / "kbench.kubeconfig"
    text = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "kubeconfig", "--data-dir", str(data_dir)],
        capture_output=True, text=True, check=True,
    ).stdout
    path.write_text(text)
    return str(path)


def warm_watch_caches(kubeconfig: str, connections: int = 32) -> None:
    """A cached list (``resourceVersion=0``) on ``connections`` fresh
    connections: each API process takes its share of them (one listening
    socket per process, spread by address) and starts its watch cache."""
    import yaml

    config = yaml.safe_load(Path(kubeconfig).read_text())
    cluster = config["clusters"][0]["cluster"]
    token = config["users"][0]["user"].get("token", "")
    context = ssl.create_default_context()
    if cluster.get("certificate-authority-data"):
        with tempfile.NamedTemporaryFile("wb", suffix=".crt") as ca:
            ca.write(base64.b64decode(cluster["certificate-authority-data"]))
            ca.flush()
            context.load_verify_locations(ca.name)
    url = cluster["server"].rstrip("/") + "/api/v1/namespaces?resourceVersion=0"
    for _ in range(connections):
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            response.read()


def median(records: list[dict], metric: str | None) -> float | None:
    values = [r["metrics"].get(metric) for r in records if r and metric]
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", required=True, help="the data directory of the kapi to measure")
    parser.add_argument("--kubeconfig", help="default: written by manage.py kubeconfig for --data-dir")
    parser.add_argument("--kbench", default=_find_kbench())
    parser.add_argument("--python", default="/tmp/kbench-venv/bin/python"
                        if Path("/tmp/kbench-venv/bin/python").exists() else sys.executable)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--benches", default="create,update,apply,list,watch-consistency")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-warm", action="store_true",
                        help="do not start the API processes' watch caches first")
    parser.add_argument("--out")
    args = parser.parse_args()
    if not Path(args.kbench).exists():
        parser.error(f"kbench not found at {args.kbench} (--kbench)")
    if not args.kubeconfig:
        args.kubeconfig = write_kubeconfig(Path(args.data_dir))
    extra = {
        "create": ["-n", "2000", "-c", "16"],
        "update": ["-n", "500", "--ops", "2000", "-c", "16"],
        "apply": ["-n", "2000", "-c", "16"],
        "list": ["--count", "10000", "--runs", "3"],
        "watch-consistency": ["-k", "8", "-t", "15"],
    }
    if not args.no_warm:
        warm_watch_caches(args.kubeconfig)
        # Writes, so that every request thread has its database connection
        # before the first measured run: kbench counts the processes alive
        # when a run starts, and a PostgreSQL backend opened during a run
        # would go uncounted (its CPU missing from that run's figure).
        out, args.out = args.out, None  # not a measurement: keep it out of --out
        run(args, "create", ["-n", "400", "-c", "16"])
        args.out = out
    benches = args.benches.split(",")
    results: dict[str, list[dict]] = {b: [] for b in benches}
    for round_ in range(args.rounds):
        print(f"round {round_ + 1}/{args.rounds}", file=sys.stderr)
        for bench in benches:
            record = run(args, bench, extra[bench])
            if record:
                results[bench].append(record)

    rows = []
    for row, bench, rate, cpu in WRITES:
        if bench in results:
            r, c = median(results[bench], rate), median(results[bench], cpu)
            rows.append((row, f"{r:,.0f} /s; {c:.2f} ms" if r is not None and c is not None else "-", KUBE[row]))
    if "list" in results:
        for row, wall, cpu in LISTS:
            w, c = median(results["list"], wall), median(results["list"], cpu)
            text = "-" if w is None else f"{w:,.0f} ms" + (f"; {c:.0f} ms CPU" if c is not None else "")
            rows.append((row, text, KUBE[row]))
    if "watch-consistency" in results:
        recs = results["watch-consistency"]
        rate = median(recs, "writes_per_s")
        cpu = median(recs, "server_cpu_ms_per_op")
        anomalies = sum(sum(r["metrics"].get(k, 0) for k in ANOMALIES) + r["metrics"].get("watchers_divergent", 0) for r in recs)
        ok = all(r["ok"] for r in recs)
        rows.append((
            "watch-consistency 8 writers",
            f"{rate or 0:,.0f} writes/s; {cpu or 0:.2f} ms; {anomalies} anomalies{'' if ok else ' (NOT ok)'}",
            KUBE["watch-consistency 8 writers"],
        ))
    print(f"\n| kbench (c=16, 1 KiB ConfigMaps), median of {args.rounds} | kapi: throughput; server CPU per op | kube-apiserver |")
    print("|---|---|---|")
    for row, kapi, kube in rows:
        print(f"| {row} | {kapi} | {kube} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
