"""The suite's scheduling is what pytest-xdist uses: a file runs whole on one
worker, and so does each group of files that share a session-scoped server
(tests/groups.py, handed to xdist by tests/conftest.py).

pytest-xdist's own ``--dist loadgroup`` silently stopped grouping under pytest
9 (every test became a unit of its own, and a shared server started once per
worker that ran one of its tests). This runs ``pytest -n 2`` over a group's
files and two others, with a plugin that records which worker got each test
instead of running it, and fails if any unit was split between workers.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

from tests.groups import FAULTS_SHARED, GROUPS, SYNC_TIMERS, unit_of

ROOT = Path(__file__).resolve().parent.parent
FILES = (*GROUPS[FAULTS_SHARED], *GROUPS[SYNC_TIMERS],
         "tests/patch/test_merge_patch.py", "tests/patch/test_decode.py")

#: Plugins the scheduling does not involve, left out of the three pytest
#: processes (their imports are most of each one's start).
NOT_NEEDED = ("-p", "no:hypothesispytest", "-p", "no:schemathesis", "-p", "no:anyio", "-p", "no:django")

PLUGIN = '''
import os

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    with open(os.environ["KAPI_SCHEDULING_RECORD"], "a") as out:
        out.write(f"{os.environ.get('PYTEST_XDIST_WORKER')} {item.nodeid}\\n")
    return True  # recorded, not run
'''


def test_each_unit_runs_whole_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "scheduling_probe.py").write_text(PLUGIN)
    record = tmp_path / "record"
    # Not a worker of this run's, and no template to make: nothing runs.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    env.update(KAPI_SCHEDULING_RECORD=str(record), KAPI_TEST_TEMPLATE_DIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")])))
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "-p", "scheduling_probe", *NOT_NEEDED,
         "-p", "no:cacheprovider", *FILES],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode in (0, 5), result.stdout[-3000:] + result.stderr[-3000:]
    workers: dict[str, set[str]] = defaultdict(set)
    files = set()
    for line in record.read_text().splitlines():
        worker, nodeid = line.split(" ", 1)
        workers[unit_of(nodeid)].add(worker)
        files.add(nodeid.split("::", 1)[0])
    assert files == set(FILES), files
    assert {worker for ran_on in workers.values() for worker in ran_on} == {"gw0", "gw1"}
    assert all(len(ran_on) == 1 for ran_on in workers.values()), dict(workers)
