"""An idle ``serve`` is quiet: no task runs every second, no log line per sweep.

The controller runtime's change feeds (lifecycle, CRD cleanup, sync) are
woken by writes, its due keys by a timer set to the next due time; what beat
still runs are slow safety sweeps, which log nothing when they find nothing.
Here the runtime's safety sweep is made to run every second, so that the
window sees it run several times, and write no line.
"""

from __future__ import annotations

import json
import os
import re
import time

from kapi_testserver import start_server, stop_server

#: Background tasks that a timer or beat (not a request) runs.
_BACKGROUND = ("kapi.sync.", "kapi.controllers.", "kapi.compact_change_log")
_SERIES = re.compile(r'^kapi_celery_tasks_total\{([^}]*)\} ([0-9.e+]+)$', re.M)


def _task_runs(server) -> dict[str, float]:
    """Runs of each background task so far, from ``/metrics``."""
    text = server.kubectl("get", "--raw", "/metrics").stdout
    runs: dict[str, float] = {}
    for labels, value in _SERIES.findall(text):
        task = dict(re.findall(r'(\w+)="([^"]*)"', labels)).get("task", "")
        if task.startswith(_BACKGROUND):
            runs[task] = runs.get(task, 0.0) + float(value)
    return runs


def _task_lines(lines: list[str]) -> list[str]:
    """The ``kapi.task`` log lines among ``lines``."""
    out = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("logger") == "kapi.task":
            out.append(line)
    return out


def test_idle_server_runs_no_per_second_task_and_logs_nothing(served_dir):
    server = start_server(
        served_dir, env={**os.environ, "KAPI_CONTROLLERS_SAFETY_SWEEP_SECONDS": "1"}
    )
    try:
        time.sleep(5)  # start-up's own work (bootstrap objects) is done
        before = _task_runs(server)
        seen = len(server.output().splitlines())
        time.sleep(6)
        after = _task_runs(server)
        lines = server.output().splitlines()[seen:]
    finally:
        stop_server(server)
    runs = {task: after[task] - before.get(task, 0.0) for task in after}
    # The safety sweep asked to run every second ran, and found nothing to log.
    assert runs.get("kapi.controllers.sweep", 0) >= 2, runs
    assert _task_lines(lines) == [], lines
    # Nothing else runs on a timer of seconds: at most one slow safety sweep each.
    others = {task: n for task, n in runs.items() if task != "kapi.controllers.sweep" and n}
    assert all(n <= 1 for n in others.values()), others
    assert not any(task.startswith("kapi.sync.") for task in others), others
