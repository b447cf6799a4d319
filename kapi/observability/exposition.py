"""The ``/metrics`` payload: Prometheus text format.

With ``PROMETHEUS_MULTIPROC_DIR`` set (``serve`` sets it), the samples of every
process that shares the directory are added up (all API server processes and
all Celery workers); otherwise this process's own. The shared-state collector
is added either way, read by the process that answers.
"""

from __future__ import annotations

import os

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    generate_latest,
    multiprocess,
)

from kapi.observability.collectors import SharedStateCollector

__all__ = ["CONTENT_TYPE_LATEST", "MULTIPROC_ENV", "render", "reset_directory"]

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def render() -> bytes:
    """The current metrics of every process (or this one) and shared state."""
    if os.environ.get(MULTIPROC_ENV):
        _forget_dead_processes(os.environ[MULTIPROC_ENV])
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = CollectorRegistry()
        for collector in list(REGISTRY._collector_to_names):
            registry.register(collector)
    registry.register(SharedStateCollector())
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
