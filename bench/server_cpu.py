"""Where a running kapi's CPU goes while a command runs, process by process.

    python bench/server_cpu.py --data-dir DIR [--per N] -- COMMAND [ARGS...]

Runs COMMAND (a kbench run, say) and prints the CPU seconds (user + system,
from ``/proc``) that each part of the server serving ``DIR`` used meanwhile:

* each API worker, split into its event-loop thread (TLS, HTTP, the
  watch-cache listener) and its other threads (requests, notifier, pools);
* PostgreSQL backends grouped by ``application_name`` (``kapi-watch-cache``
  and ``kapi-notify`` are the listener's and the notifier's connections;
  ``client backend`` is everything else, mostly the request threads' pool),
  and PostgreSQL's own processes by kind;
* Celery, Redis and ``serve`` itself;
* processes that started and ended meanwhile (a backend per new database
  connection, say), which ``/proc`` no longer lists at the end: their CPU is
  in their parent's ``cutime``/``cstime`` once reaped, counted as "ended
  children of" the parent's part. kbench's ``--server-pids`` reads only the
  processes it was given, and misses them.

``--per N`` also prints each figure in milliseconds per operation, for a
command that made N operations. Issue #15's fourth pass and session 9 in
bench/README.md were measured this way.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from kbench_table import server_pids

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(stat_path: str, children: bool = False) -> float:
    """CPU seconds of a process or thread; ``children``: of its children
    that have ended and been waited for."""
    try:
        fields = Path(stat_path).read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    first = 13 if children else 11
    return (int(fields[first]) + int(fields[first + 1])) / TICK


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _backend_names(data_dir: Path) -> dict[int, str]:
    import psycopg

    url = f"postgresql://postgres@/postgres?host={data_dir.resolve() / 'postgres'}"
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT pid, application_name, backend_type FROM pg_stat_activity").fetchall()
    return {pid: (app or kind or "?") for pid, app, kind in rows}


def _label(pid: int, names: dict[int, str]) -> str:
    if pid in names:
        return f"postgres: {names[pid]}"
    line = _cmdline(pid)
    if "multiprocessing" in line or "kapi.runtime.apiserver" in line:
        return "api supervisor" if "kapi.runtime.apiserver" in line else "api worker"
    for word, label in (("celery", "celery"), ("redis", "redis"), ("postgres", "postgres: other"), ("serve", "serve")):
        if word in line:
            return label + (" beat" if label == "celery" and " beat " in line else "")
    return line[:40] or "?"


def _snapshot(pids: list[int]) -> dict[str, float]:
    """CPU seconds per process, and per thread for the API workers."""
    out = {}
    for pid in pids:
        out[f"{pid}"] = cpu_seconds(f"/proc/{pid}/stat")
        out[f"{pid}+ended"] = cpu_seconds(f"/proc/{pid}/stat", children=True)
        if "multiprocessing" in _cmdline(pid):
            try:
                threads = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in threads:
                out[f"{pid}/{tid}"] = cpu_seconds(f"/proc/{pid}/task/{tid}/stat")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", required=True, type=Path)
    parser.add_argument("--per", type=int, help="operations the command made")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")

    names = _backend_names(args.data_dir)
    pids = server_pids(args.data_dir)
    if not pids:
        sys.exit(f"no kapi serving {args.data_dir}")
    before = _snapshot(pids)
    subprocess.run(command, check=True)
    # Processes started meanwhile (pooled connections' backends) count whole;
    # those that also ended meanwhile are not seen.
    after = _snapshot(sorted(set(pids) | set(server_pids(args.data_dir))))
    names.update(_backend_names(args.data_dir))

    totals: dict[str, float] = {}
    for key, value in after.items():
        pid, ended, _ = key.partition("+")
        if ended and key not in before:
            continue  # a new parent: what its children did before is not ours
        spent = value - before.get(key, 0.0)
        pid, _, tid = pid.partition("/")
        label = _label(int(pid), names)
        if ended:
            if spent < 0.005:
                continue
            label = f"ended children of {label}"
        elif label == "api worker":
            if not tid:
                continue  # counted by its threads
            label += ": event-loop thread" if tid == pid else ": other threads"
        totals[label] = totals.get(label, 0.0) + spent
    total = sum(totals.values())
    for label, spent in sorted(totals.items(), key=lambda item: -item[1]):
        if spent >= 0.005:
            per = f"  {spent / args.per * 1000:7.3f} ms/op" if args.per else ""
            print(f"{spent:8.2f} s{per}  {label}")
    per = f"  {total / args.per * 1000:7.3f} ms/op" if args.per else ""
    print(f"{total:8.2f} s{per}  all server processes")


if __name__ == "__main__":
    main()
