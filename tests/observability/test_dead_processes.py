"""The multiprocess metrics directory does not grow with exited processes.

Real processes count into a real directory and exit; after a merge only the
merged files and the files of living processes remain, and a scrape reads the
same totals as before (counters and histograms never go down), while the live
gauges of the dead are dropped.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest, multiprocess
from prometheus_client.parser import text_string_to_metric_families

from kapi.observability import deadprocs

COUNT = r"""
import sys, time
from prometheus_client import Counter, Gauge, Histogram
c = Counter("soak_things", "things", ["kind"])
h = Histogram("soak_seconds", "seconds", ["kind"], buckets=(0.1, 1))
live = Gauge("soak_open", "open", multiprocess_mode="livesum")
recent = Gauge("soak_state", "state", ["name"], multiprocess_mode="mostrecent")
n = int(sys.argv[1])
c.labels("a").inc(n)
c.labels(f"only-{n}").inc()
h.labels("a").observe(0.5 * n)
live.inc()
recent.labels("x").set(n)
if sys.argv[2] == "stay":
    print("ready", flush=True)
    sys.stdin.read()
"""


def _count(directory: Path, n: int, stay: bool = False) -> subprocess.Popen:
    proc = subprocess.Popen(
        [sys.executable, "-c", COUNT, str(n), "stay" if stay else "exit"],
        env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(directory)},
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    if stay:
        assert proc.stdout.readline().strip() == "ready"
    else:
        assert proc.wait(timeout=60) == 0
    return proc


def _scrape(directory: Path) -> dict[tuple, float]:
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, str(directory))
    out = {}
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def test_files_of_exited_processes_are_merged_without_changing_totals(tmp_path: Path) -> None:
    """Ten exited processes leave 2 merged files instead of 40; counters and
    histograms scrape the same, the most recent gauge keeps the last value, and
    a live gauge counts only the living."""
    alive = _count(tmp_path, 100, stay=True)
    try:
        for n in range(1, 11):
            _count(tmp_path, n)
        before = _scrape(tmp_path)
        assert before[("soak_open", ())] == 11
        assert len(list(tmp_path.glob("*.db"))) == 44

        assert deadprocs.merge_dead(tmp_path) == 40
        assert sorted(p.name for p in tmp_path.glob("*.db")) == sorted([
            "counter_merged.db", "histogram_merged.db", "gauge_mostrecent_merged.db",
            f"counter_{alive.pid}.db", f"histogram_{alive.pid}.db",
            f"gauge_livesum_{alive.pid}.db", f"gauge_mostrecent_{alive.pid}.db",
        ])

        after = _scrape(tmp_path)
        for key, value in before.items():
            if key[0] != "soak_open":
                assert after[key] == value, key
        assert after[("soak_things_total", (("kind", "a"),))] == 100 + 55
        assert after[("soak_seconds_count", (("kind", "a"),))] == 11
        assert after[("soak_state", (("name", "x"),))] == 10

        # More processes come and go: the merged files take them in too.
        for n in range(11, 14):
            _count(tmp_path, n)
        deadprocs.merge_dead(tmp_path)
        again = _scrape(tmp_path)
        assert again[("soak_things_total", (("kind", "a"),))] == 100 + sum(range(1, 14))
        assert again[("soak_state", (("name", "x"),))] == 13
    finally:
        alive.communicate("")
    # The last one exits too: only the merged files are left.
    alive.wait(timeout=30)
    deadprocs.merge_dead(tmp_path)
    assert sorted(p.name for p in tmp_path.glob("*.db")) == [
        "counter_merged.db", "gauge_mostrecent_merged.db", "histogram_merged.db"]
    assert _scrape(tmp_path)[("soak_things_total", (("kind", "a"),))] == 100 + sum(range(1, 14))


def test_a_merge_in_progress_is_not_repeated(tmp_path: Path) -> None:
    """While one process holds the merge lock, another's merge does nothing
    (no file is folded twice)."""
    _count(tmp_path, 1)
    import fcntl

    with deadprocs.locked(tmp_path, fcntl.LOCK_EX) as got:
        assert got
        assert deadprocs.merge_dead(tmp_path) == 0
    assert deadprocs.merge_dead(tmp_path) == 4
