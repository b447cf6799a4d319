"""Which test files run together on one pytest-xdist worker.

Every test file is a unit of work of its own: it runs whole on one worker, so
its module-scoped servers start once. The files listed here share a
session-scoped server, and run as one unit, so that one worker starts that
server once; a file names its shared server by fixture, this table names its
unit. ``tests/conftest.py`` hands the units to pytest-xdist (its own
``--dist loadgroup`` reads groups from a suffix of node ids that pytest 9 no
longer lets a plugin change: pytest-xdist issue 1386).
"""

from __future__ import annotations

from pathlib import PurePosixPath

__all__ = ["FAULTS_SHARED", "GROUPS", "SYNC_TIMERS", "WATCH_SERVER", "unit_of"]

#: tests/watch/conftest.py's ``watch_server`` (short bookmark, compaction and
#: history timers).
WATCH_SERVER = "watch-server"
#: tests/faults/conftest.py's ``shared_fault_server``: the fault tests after
#: which the server is whole again (each asserts it: a killed Celery or API
#: worker replaced). Not ``test_kept_connections``: every request thread whose
#: connection PostgreSQL closed answers its next request with a 503.
FAULTS_SHARED = "faults-whole-afterwards"
#: tests/sync/conftest.py's ``timers_server``.
SYNC_TIMERS = "sync-timers-server"

GROUPS: dict[str, tuple[str, ...]] = {
    WATCH_SERVER: (
        "tests/watch/test_background.py",
        "tests/watch/test_clients.py",
        "tests/watch/test_consistency.py",
        "tests/watch/test_versions_http.py",
        "tests/watch/test_watch_http.py",
    ),
    FAULTS_SHARED: (
        "tests/faults/test_api_kill.py",
        "tests/faults/test_worker_kill.py",
        "tests/faults/test_worker_kill_gc.py",
        "tests/faults/test_worker_kill_reconcile.py",
    ),
    SYNC_TIMERS: (
        "tests/sync/test_health_wake.py",
        "tests/sync/test_retention.py",
        "tests/sync/test_stage_timeouts.py",
    ),
}

_GROUP_OF = {path: group for group, paths in GROUPS.items() for path in paths}


def unit_of(path: str) -> str:
    """The unit of work of a test file (its path relative to the project, or
    a node id, whose file part is used): its group, or the file itself."""
    file = str(PurePosixPath(path.split("::", 1)[0]))
    return _GROUP_OF.get(file, file)
