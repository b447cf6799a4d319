"""Writes right after a big namespace was purged: does a lookup by key stay on its index?

    python bench/after_purge.py --data-dir DIR [--objects 4000]

Against the kapi serving ``DIR`` (``manage.py serve --data-dir DIR``): a
``kbench create`` of ``--objects`` ConfigMaps whose namespace kbench then
deletes (the lifecycle workers purge it), then ``VACUUM (ANALYZE)
kapi_object`` as autovacuum runs it after a purge, then the same ``kbench
create`` again. Prints each run's throughput and server CPU per create, and
the sequential scans of ``kapi_object`` during the second run with the rows
they read. Every API process's watch cache is started first, as
``kbench_table.py`` does. Before migration 0013, a prepared statement planned
while the table was three pages long kept a sequential scan for every
create's namespace lookup.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import psycopg
from kbench_table import _find_kbench, run, warm_watch_caches, write_kubeconfig

_SCANS = "SELECT seq_scan, seq_tup_read FROM pg_stat_user_tables WHERE relname = 'kapi_object'"


def _connect(data_dir: Path) -> psycopg.Connection:
    """The embedded PostgreSQL of ``data_dir`` (its unix socket)."""
    return psycopg.connect(host=str(data_dir / "postgres"), user="postgres", dbname="postgres", autocommit=True)


def _sql(data_dir: Path, statement: str) -> tuple:
    """The first row of ``statement``."""
    with _connect(data_dir) as conn:
        return conn.execute(statement).fetchone()


def _scans(data_dir: Path) -> tuple[int, int]:
    # A busy backend reports its statistics at most once a second, an idle
    # one within ten (PostgreSQL's PGSTAT_IDLE_INTERVAL).
    time.sleep(11)
    scans, rows = _sql(data_dir, _SCANS)
    return int(scans), int(rows)


def _line(record: dict | None) -> str:
    if record is None:
        return "failed"
    metrics = record["metrics"]
    return f"{metrics['create_per_s']:.0f} /s; {metrics.get('server_cpu_ms_per_op') or 0:.2f} ms server CPU per create"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--kubeconfig")
    parser.add_argument("--objects", type=int, default=4000)
    parser.add_argument("--kbench", default=_find_kbench())
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    args.data_dir = args.data_dir.resolve()
    args.quick = False
    args.out = None
    if not args.kubeconfig:
        args.kubeconfig = write_kubeconfig(args.data_dir)
    warm_watch_caches(args.kubeconfig)  # as kbench_table.py: every API process's cache reading
    extra = ["-n", str(args.objects), "-c", "16"]
    first = run(args, "create", extra)  # kbench deletes its namespace at the end
    with _connect(args.data_dir) as conn:
        conn.execute("VACUUM (ANALYZE) kapi_object")
    (pages,) = _sql(args.data_dir, "SELECT relpages FROM pg_class WHERE relname = 'kapi_object'")
    before = _scans(args.data_dir)
    second = run(args, "create", extra)
    after = _scans(args.data_dir)
    print(f"create, first run:          {_line(first)}")
    print(f"kapi_object after the purge and VACUUM: {pages} pages")
    print(f"create, after the purge:    {_line(second)}")
    print(f"  sequential scans of kapi_object meanwhile: {after[0] - before[0]}, reading {after[1] - before[1]} rows")
    return 0 if first and second else 1


if __name__ == "__main__":
    sys.exit(main())
