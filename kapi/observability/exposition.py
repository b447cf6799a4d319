"""The ``/metrics`` payload: Prometheus text format.

With ``PROMETHEUS_MULTIPROC_DIR`` set (``serve`` sets it), the samples of every
process that shares the directory are added up (all API server processes and
all Celery workers); otherwise this process's own. The files of processes that
have exited are folded into one per type first (:mod:`deadprocs`), so the
directory does not grow with every process that ever counted. The shared-state collector
is added either way, read by the process that answers.
"""

from __future__ import annotations

import fcntl
import os

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    generate_latest,
    multiprocess,
)

from kapi.observability import deadprocs
from kapi.observability.collectors import SharedStateCollector
from kapi.observability.objectseries import ExistingObjectsOnly

__all__ = ["CONTENT_TYPE_LATEST", "MULTIPROC_ENV", "render", "reset_directory"]

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def render() -> bytes:
    """The current metrics of every process (or this one) and shared state."""
    registry = CollectorRegistry()
    path = os.environ.get(MULTIPROC_ENV)
    if not path:
        for collector in list(REGISTRY._collector_to_names):
            registry.register(collector)
        registry.register(SharedStateCollector())
        return generate_latest(registry)
    _forget_dead_processes(path)
    deadprocs.merge_dead(path)
    registry.register(ExistingObjectsOnly(multiprocess.MultiProcessCollector(None)))
    registry.register(SharedStateCollector())
    # Shared: a merge (exclusive) never removes a file while this scrape reads.
    with deadprocs.locked(path, fcntl.LOCK_SH):
        return generate_latest(registry)


def reset_directory(path) -> None:
    """Empty the multiprocess directory before the processes start (the files
    of a previous run would otherwise be added to this one's)."""
    from pathlib import Path

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    for entry in path.glob("*.db"):
        entry.unlink(missing_ok=True)


def _forget_dead_processes(path: str) -> None:
    """Drop the live gauges (open watches) of processes that died without
    saying so (kill -9, a replaced uvicorn worker): ``mark_process_dead``
    for every pid whose ``gauge_live*`` file remains. Counters and histograms
    of dead processes are kept: totals must not go down."""
    from pathlib import Path

    for entry in Path(path).glob("gauge_live*_*.db"):
        try:
            pid = int(entry.stem.rsplit("_", 1)[1])
        except ValueError:
            continue
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            multiprocess.mark_process_dead(pid, path)
        except PermissionError:
            pass
