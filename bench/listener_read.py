"""What one read of the watch cache's listener costs PostgreSQL, reading every
collection's changes against reading only the collections it follows.

    python bench/listener_read.py --data-dir DIR [--rows 8] [--reads 3000]
        [--follow /namespaces]

Attaches to the embedded PostgreSQL of the kapi serving ``DIR`` (``manage.py
serve --data-dir DIR``), which must hold a change log of a few thousand writes
(after ``kbench create``, say). Each read is the listener's statement for a
window of ``--rows`` consecutive changes (a pump under a stream of writes), through
the listener's own statements (prepared, libpq); the figure is the backend's CPU per read (from
``/proc``), and the wall time per read. ``--follow`` lists the followed
collections as ``group/resource`` (the core group is empty: ``/namespaces``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent


def _backend_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--rows", type=int, default=8)
    parser.add_argument("--reads", type=int, default=3000)
    parser.add_argument("--follow", default="/namespaces")
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
    from kapi.storage.backend.statements import statement_rows
    from kapi.storage.changes import changes_statement, collections_changes_statement

    conn = psycopg.connect(host=str(args.data_dir / "postgres"), user="postgres", dbname="postgres", autocommit=True)
    (pid,) = conn.execute("SELECT pg_backend_pid()").fetchone()
    (newest,) = conn.execute("SELECT max(resource_version) FROM kapi_change").fetchone()
    (oldest,) = conn.execute("SELECT min(resource_version) FROM kapi_change").fetchone()
    if newest is None or newest - oldest < 2 * args.rows:
        print("the change log is (nearly) empty: write some objects first", file=sys.stderr)
        return 1
    span = newest - oldest - args.rows
    collections = tuple(tuple(c.split("/", 1)) for c in args.follow.split(","))
    for label, (statement, params) in (
        ("every collection", changes_statement()),
        (f"followed ({args.follow})", collections_changes_statement(collections)),
    ) * 2:
        cpu, started = _backend_cpu(pid), time.perf_counter()
        for i in range(args.reads):
            after = oldest + i % span
            conn.wait(statement_rows(conn, statement, [after, after + args.rows, *params, 2000]))
        per_cpu = (_backend_cpu(pid) - cpu) / args.reads * 1e6
        per_wall = (time.perf_counter() - started) / args.reads * 1e6
        print(f"{label:32} PostgreSQL {per_cpu:5.0f} us CPU per read, {per_wall:5.0f} us wall ({args.rows} changes a read)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
