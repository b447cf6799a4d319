"""Files of exited processes in the Prometheus multiprocess directory.

Every process that counts writes ``<type>_<pid>.db`` files there (gauges:
``gauge_<mode>_<pid>.db``), and a scrape reads them all. A process that exits
leaves its files behind, so without care every replaced uvicorn worker, every
recycled Celery pool process and every short-lived ``manage.py`` process would
add files, and every scrape would read more of them, forever.

:func:`merge_dead` folds the files of each exited process into one
``<type>_merged.db`` per type and removes them: counters, histograms and
summaries are added (totals never go down, as Prometheus requires), gauges
combined as their mode says (``sum`` added, ``min``/``max`` kept,
``mostrecent`` by timestamp); ``live*`` gauges and ``all`` gauges (a series
per pid) of a dead process are dropped, as ``mark_process_dead`` does.

Readers and the merge take ``merge.lock`` in the directory (shared for a scrape,
exclusive for a merge), so a scrape never sees a file vanish under it or a
sample counted twice. The merged files are emptied with the rest at ``serve``
start (:func:`kapi.observability.exposition.reset_directory`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from prometheus_client.mmap_dict import MmapedDict

from kapi.runtime.pids import alive

__all__ = ["LOCK_NAME", "MERGED", "locked", "merge_dead"]

LOCK_NAME = "merge.lock"
MERGED = "merged"
_ADDED = {"counter", "histogram", "summary"}


@contextlib.contextmanager
def locked(path: str | Path, how: int) -> Iterator[bool]:
    """Hold ``merge.lock`` (``fcntl.LOCK_SH``/``LOCK_EX``, maybe ``| LOCK_NB``);
    yields False when a non-blocking attempt found it taken."""
    fd = os.open(Path(path) / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, how)
        except BlockingIOError:
            yield False
            return
        yield True
    finally:
        os.close(fd)  # releases the lock


def _pid_of(entry: Path) -> int | None:
    tail = entry.stem.rsplit("_", 1)[-1]
    return int(tail) if tail.isdigit() else None


def _combine(mode: str, old: float, old_ts: float, value: float, ts: float) -> tuple[float, float]:
    if mode in _ADDED or mode == "sum":
        return old + value, max(old_ts, ts)
    if mode == "max":
        return max(old, value), max(old_ts, ts)
    if mode == "min":
        return min(old, value), max(old_ts, ts)
    # mostrecent
    return (value, ts) if ts >= old_ts else (old, old_ts)


def _fold(entry: Path, target: Path, mode: str) -> None:
    values = MmapedDict.read_all_values_from_file(str(entry))
    merged = MmapedDict(str(target))
    try:
        for key, value, ts, _ in values:
            existed = key in merged._positions
            old, old_ts = merged.read_value(key)
            if not existed and mode in ("min", "max", "mostrecent"):
                merged.write_value(key, value, ts)
            else:
                merged.write_value(key, *_combine(mode, old, old_ts, value, ts))
    finally:
        merged.close()


def merge_dead(path: str | Path) -> int:
    """Fold the files of exited processes into the merged files; returns how
    many files were removed. Skips (returns 0) while another process merges."""
    path = Path(path)
    with locked(path, fcntl.LOCK_EX | fcntl.LOCK_NB) as got:
        if not got:
            return 0
        removed = 0
        for entry in sorted(path.glob("*.db")):
            pid = _pid_of(entry)
            if pid is None or alive(pid):
                continue
            parts = entry.stem.split("_")
            typ = parts[0]
            if typ == "gauge":
                mode = parts[1]
                if not mode.startswith("live") and mode != "all":
                    _fold(entry, path / f"gauge_{mode}_{MERGED}.db", mode)
            elif typ in _ADDED:
                _fold(entry, path / f"{typ}_{MERGED}.db", typ)
            else:
                continue
            entry.unlink()
            removed += 1
        return removed
