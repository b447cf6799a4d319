"""Counting after a fork: each process writes its own multiprocess file.

kapi keeps the process id that prometheus_client's multiprocess values check
on every count (instead of a ``getpid`` system call each time) and refreshes
it in a forked child, as Celery's prefork pool forks its workers. A child
that kept its parent's id would write into the parent's file through a
second map of it, and a scrape would add the two processes' counts wrongly.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest, multiprocess
from prometheus_client.parser import text_string_to_metric_families

COUNT_AND_FORK = r"""
import os, sys
sys.path.insert(0, os.getcwd())
from kapi.observability import metrics
total = metrics.REQUEST_TOTAL.labels("create", "", "v1", "configmaps", "", "namespace", "201")
total.inc(5)
child = os.fork()
if child == 0:
    total.inc(2)
    os._exit(0)
_, status = os.waitpid(child, 0)
total.inc(1)
print(os.getpid(), child, status, flush=True)
"""


def _requests(directory: Path) -> float:
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry, str(directory))
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        for sample in family.samples:
            if sample.name == "apiserver_request_total" and sample.labels.get("verb") == "create":
                return sample.value
    raise AssertionError("apiserver_request_total not scraped")


def test_a_forked_child_counts_into_a_file_of_its_own(tmp_path):
    out = subprocess.run(
        [sys.executable, "-c", COUNT_AND_FORK],
        env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "kapi.settings"},
        cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, timeout=60, check=True,
    )
    parent, child, status = (int(x) for x in out.stdout.split())
    assert status == 0
    assert (tmp_path / f"counter_{parent}.db").exists()
    assert (tmp_path / f"counter_{child}.db").exists()
    # The parent's 5 + 1 and the child's 2 (its copy of the parent's 5 is not written again).
    assert _requests(tmp_path) == 8
