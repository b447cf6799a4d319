"""Housekeeping of the sync's files under the data directory.

The sync keeps hosted repositories (``git/``), mirrors (``sync/mirrors/``) and
checkouts (``sync/checkouts/``) per GitRepository. Deleting a GitRepository
removes its repository and mirror, but its checkouts stayed, and a worker
killed mid-checkout leaves a temporary directory; git itself packs loose
objects only when a push or fetch happens to run ``gc --auto``. Over months
each of these grows the disk. :func:`run`, a Celery beat task every
``KAPI_SYNC_HOUSEKEEPING_SECONDS`` (default 600), bounds them:

* the directories of GitRepositories that no longer exist go (only once
  untouched for ``grace_seconds``: the object list is read after the
  directories, and a directory made meanwhile is young);
* temporary directories and files of interrupted work (names starting with
  ``.``) go once an hour old, but for ``git/.deleted``, where
  ``sync.retention`` keeps deleted hosted repositories for their retention time;
* ``git gc --auto`` runs in every hosted repository and mirror that remains
  (git's own thresholds: 6,700 loose objects or 50 packs; unreachable objects
  pruned after two weeks).

Several workers may run it at once: removals tolerate each other, and git
locks its own gc.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import time
from pathlib import Path

from kapi.runtime import config
from sync import retention

__all__ = ["GRACE_SECONDS", "STALE_SECONDS", "run"]

log = logging.getLogger(__name__)

GRACE_SECONDS = 600
STALE_SECONDS = 3600
GC_TIMEOUT = 600

def _existing() -> set[tuple[str, str]]:
    from kapi.storage import default_storage
    from sync.kinds import GROUP

    return {(k.namespace, k.name) for k in default_storage().keys(GROUP, ["gitrepositories"])}


def _age(path: Path, now: float) -> float:
    try:
        return now - path.lstat().st_mtime
    except OSError:
        return 0.0


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _owned(root: Path, suffix: str) -> list[tuple[str, str, Path]]:
    """(namespace, name, path) of each ``root/<ns>/<name><suffix>``."""
    out = []
    if not root.is_dir():
        return out
    for ns_dir in root.iterdir():
        if not ns_dir.is_dir():
            continue
        for entry in ns_dir.iterdir():
            if not entry.name.startswith(".") and entry.name.endswith(suffix):
                out.append((ns_dir.name, entry.name.removesuffix(suffix) if suffix else entry.name, entry))
    return out


def _temporaries(root: Path, depth: int, keep: tuple[Path, ...] = ()) -> list[Path]:
    """Entries starting with ``.`` at most ``depth`` levels below ``root``,
    but for ``keep`` (kept on purpose, e.g. retained deleted repositories)."""
    out: list[Path] = []
    level = [root] if root.is_dir() else []
    for _ in range(depth):
        nxt = []
        for directory in level:
            for entry in directory.iterdir():
                if entry in keep:
                    continue
                if entry.name.startswith("."):
                    out.append(entry)
                elif entry.is_dir() and not entry.name.endswith(".git"):
                    nxt.append(entry)
        level = nxt
    return out


def run(grace_seconds: float = GRACE_SECONDS, stale_seconds: float = STALE_SECONDS) -> dict:
    """One pass; returns what it did (counts), for the log and tests."""
    data = config.data_dir()
    hosted, mirrors, checkouts = data / "git", data / "sync" / "mirrors", data / "sync" / "checkouts"
    now = time.time()
    dirs = _owned(hosted, ".git") + _owned(mirrors, ".git") + _owned(checkouts, "")
    existing = _existing()  # after listing: a directory made meanwhile is young
    removed = 0
    for ns, name, path in dirs:
        if (ns, name) not in existing and _age(path, now) >= grace_seconds:
            _remove(path)
            removed += 1
    stale = 0
    # Deleted hosted repositories are retained and expired by sync.retention.
    keep = (retention.retained_root(),)
    for root, depth in ((hosted, 2), (mirrors, 2), (checkouts, 3)):
        for path in _temporaries(root, depth, keep):
            if _age(path, now) >= stale_seconds:
                _remove(path)
                stale += 1
    for root in (hosted, mirrors, checkouts):
        if root.is_dir():
            for ns_dir in root.iterdir():
                if ns_dir.is_dir() and not any(ns_dir.iterdir()) and _age(ns_dir, now) >= grace_seconds:
                    ns_dir.rmdir()
    collected = 0
    for ns, name, path in _owned(hosted, ".git") + _owned(mirrors, ".git"):
        if (ns, name) in existing and (path / "HEAD").exists():
            try:
                subprocess.run(["git", "-C", str(path), "gc", "--auto", "--quiet"],
                               capture_output=True, timeout=GC_TIMEOUT, stdin=subprocess.DEVNULL)
                collected += 1
            except (OSError, subprocess.TimeoutExpired) as exc:
                log.warning("git gc --auto failed in %s: %s", path, exc)
    result = {"removed": removed, "stale": stale, "gc": collected}
    log.info("sync housekeeping", extra={"fields": result})
    return result
