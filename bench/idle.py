"""What an idle ``serve`` costs: CPU of every server process and log lines.

    python bench/idle.py [--settle 20] [--seconds 60]

Starts a real ``serve`` (API, Celery worker and beat, embedded PostgreSQL and
Redis) on a temporary data directory, lets it settle, then, doing nothing,
measures over ``--seconds``:

* CPU of all server processes (utime + stime from ``/proc/PID/stat``), as a
  percentage of one core and per process kind;
* log lines per minute, with the loggers and tasks that wrote them;
* PostgreSQL transactions per minute (``pg_stat_database``), the statements a
  timer costs even when it logs nothing.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import psycopg

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from kapi_testserver import server_processes, start_server, stop_server  # noqa: E402

from kapi.runtime.config import _embedded_postgres_url  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of one process, from /proc (0 once it is gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0.0
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def kind_of(cmdline: list[str]) -> str:
    text = " ".join(cmdline)
    for needle, kind in (
        ("celery", "celery beat" if " beat" in text else "celery worker"),
        ("uvicorn", "api"),
        ("kapi.runtime.apiserver", "api"),  # the API processes' supervisor
        ("multiprocessing", "api"),  # uvicorn's workers are spawned
        ("postgres", "postgres"),
        ("pgserver", "postgres"),
        ("redis", "redis"),
        ("manage.py serve", "serve"),
    ):
        if needle in text:
            return kind
    return "other: " + text[:40]


def every_process(server) -> dict[int, str]:
    """pid -> kind of every server process, with the daemons' children
    (PostgreSQL's backends, which ``server_processes`` does not name)."""
    found = {}
    for proc in [psutil.Process(server.process.pid), *server_processes(server)]:
        for p in [proc, *proc.children(recursive=True)]:
            found[p.pid] = kind_of(p.cmdline())
    return found


def transactions(server) -> int:
    """Committed + rolled-back transactions of the kapi database so far."""
    url = _embedded_postgres_url(server.data_dir / "postgres")
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT sum(xact_commit + xact_rollback) FROM pg_stat_database"
            " WHERE datname = current_database()"
        ).fetchone()
    return int(row[0])


def describe(line: str) -> str:
    """The logger (and task) a log line comes from, or its first words."""
    try:
        record = json.loads(line)
    except ValueError:
        return line[:60]
    if not isinstance(record, dict):
        return line[:60]
    name = record.get("logger") or record.get("name") or "?"
    task = record.get("task") or record.get("task_name")
    return f"{name} {task}" if task else f"{name}: {str(record.get('message', ''))[:50]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--settle", type=float, default=20.0)
    parser.add_argument("--seconds", type=float, default=60.0)
    args = parser.parse_args()

    data_dir = Path(tempfile.mkdtemp(prefix="kapi-idle-")) / "data"
    server = start_server(data_dir, env={**os.environ})
    try:
        time.sleep(args.settle)
        kinds = every_process(server)
        before = {pid: cpu_seconds(pid) for pid in kinds}
        xacts = transactions(server)
        lines_before = server.output().count("\n")
        started = time.monotonic()
        time.sleep(args.seconds)
        elapsed = time.monotonic() - started
        after = {pid: cpu_seconds(pid) for pid in kinds}
        xacts = transactions(server) - xacts - 1  # minus our own second look
        new_lines = server.output().splitlines()[lines_before:]
    finally:
        stop_server(server)
        subprocess.run(["rm", "-rf", str(data_dir.parent)], check=False)

    per_kind: collections.Counter = collections.Counter()
    for pid, kind in kinds.items():
        per_kind[kind] += max(0.0, after[pid] - before[pid])
    total = sum(per_kind.values())
    per_minute = 60.0 / elapsed
    print(f"idle for {elapsed:.0f} s after {args.settle:.0f} s of settling, {len(kinds)} processes")
    print(f"cpu: {100 * total / elapsed:.2f} % of one core ({total:.2f} s)")
    for kind, seconds in per_kind.most_common():
        print(f"  {kind:14} {100 * seconds / elapsed:6.2f} %")
    print(f"log lines per minute: {len(new_lines) * per_minute:.1f}")
    for what, count in collections.Counter(map(describe, new_lines)).most_common(8):
        print(f"  {count * per_minute:7.1f}  {what}")
    print(f"database transactions per minute: {xacts * per_minute:.0f}")


if __name__ == "__main__":
    main()
