"""Hosted repositories kept after their GitRepository is deleted, and restored on request.

A hosted repository (a GitRepository without ``spec.url``) may hold the only
copy of its history, so deleting the GitRepository must not destroy it at
once. Its finalizer (``sync.source``) calls ``retain``, which moves the bare
repository into a retention area of the data directory::

    git/.deleted/<namespace>/<name>-<YYYYmmddTHHMMSSZ>[-N].git

(a rename on the same file system: nothing is copied, and a reader sees the
repository either in place or retained). It stays there for
``KAPI_GIT_RETENTION_DAYS`` (default 30; 0 deletes at once, as mirrors of
remote repositories always are, being re-fetchable), at most
``KAPI_GIT_RETENTION_MAX_PER_NAMESPACE`` copies per namespace (default 20,
the oldest go first). A repository with no refs has nothing to lose and is removed.

Restoring is an administrator's act, never automatic: a namespace deleted and
created again may belong to someone else, who must not inherit the history.
``python manage.py sync restore NAMESPACE/NAME`` (``restore``) moves the
newest retained copy (or ``--deleted-at STAMP``) back in place of the empty
repository of a GitRepository of that name created again, and asks for the
repository to be reconciled, so its Syncs apply the restored revision.

``expire`` removes copies older than the retention (Celery beat,
``kapi.sync.expire_retained``, every ``KAPI_GIT_RETENTION_SWEEP_SECONDS``).
It is bounded (``limit`` copies per run, and the task re-enqueues itself when
more are due), idempotent and safe with any number of workers, on one machine
or on a shared volume: a worker first claims a copy by renaming it to
``git/.deleted/.expiring-<unix time>-<random>`` (a rename succeeds for one
worker only) and removes only what it claimed; a claim left by a killed
worker (older than ``CLAIM_STALE_SECONDS``) is claimed again by a later run.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import git
from django.conf import settings

from sync import gitstore

__all__ = [
    "CLAIM_STALE_SECONDS",
    "RestoreError",
    "Retained",
    "expire",
    "restore",
    "retain",
    "retained",
    "retained_root",
]

log = logging.getLogger(__name__)

_STAMP = "%Y%m%dT%H%M%SZ"
_NAME = re.compile(r"^(?P<name>.+)-(?P<stamp>\d{8}T\d{6}Z)(?:-(?P<n>\d+))?\.git$")
_CLAIM = ".expiring-"
#: A claim this old was left by a killed worker (removing one copy takes seconds).
CLAIM_STALE_SECONDS = 600


class RestoreError(Exception):
    """A retained repository cannot be restored; the message says why and what to do."""


@dataclass(frozen=True)
class Retained:
    """One retained copy: whose it was, when it was deleted, where it is."""

    namespace: str
    name: str
    deleted_at: datetime
    path: Path

    @property
    def stamp(self) -> str:
        return self.path.name[len(self.name) + 1 : -len(".git")]


def retained_root() -> Path:
    return gitstore.hosted_root() / ".deleted"


def _retention() -> timedelta:
    return timedelta(days=float(getattr(settings, "SYNC_GIT_RETENTION_DAYS", 30)))


def _has_refs(path: Path) -> bool:
    """Whether ``path`` may hold history: True for a repository with refs and,
    when unsure (a directory git cannot read), True too, so it is kept."""
    try:
        repo = git.Repo(path)
    except git.NoSuchPathError:
        return False
    except git.InvalidGitRepositoryError:
        return True
    try:
        return bool(repo.git.for_each_ref("--count=1"))
    except git.GitCommandError:
        return True
    finally:
        repo.close()


def retain(namespace: str, name: str, now: datetime | None = None) -> Path | None:
    """Move the hosted repository of ``namespace/name`` into the retention area;
    returns where (None: there was nothing to keep, or retention is off).
    Idempotent: once moved, there is nothing left to move."""
    source = gitstore.hosted_path(namespace, name)
    if not source.exists():
        return None
    if _retention() <= timedelta(0) or not _has_refs(source):
        _remove(source)
        return None
    now = now or datetime.now(UTC)
    folder = retained_root() / namespace
    stamp = now.strftime(_STAMP)
    for n in range(1, 1000):
        folder.mkdir(parents=True, exist_ok=True)  # ``expire`` removes empty ones
        dest = folder / (f"{name}-{stamp}.git" if n == 1 else f"{name}-{stamp}-{n}.git")
        try:
            # mkdir claims the name (a rename onto an empty directory replaces it).
            dest.mkdir()
        except FileExistsError:
            continue
        try:
            os.rename(source, dest)
        except FileNotFoundError:
            dest.rmdir()  # another worker retained it meanwhile
            return None
        log.info("retained hosted repository %s/%s at %s", namespace, name, dest)
        _cap(namespace)
        return dest
    raise OSError(f"cannot find a free name for {namespace}/{name} under {folder}")


def _cap(namespace: str) -> None:
    """Keep the newest ``KAPI_GIT_RETENTION_MAX_PER_NAMESPACE`` copies of a
    namespace: creating, pushing to and deleting repositories in a loop must
    not fill the disk for the retention time."""
    most = int(getattr(settings, "SYNC_GIT_RETENTION_MAX_PER_NAMESPACE", 20))
    copies = retained(namespace)
    for copy in copies[: max(0, len(copies) - most)]:
        claim = retained_root() / f"{_CLAIM}{int(time.time())}-{uuid.uuid4().hex}"
        try:
            os.rename(copy.path, claim)
        except FileNotFoundError:
            continue
        _remove(claim)
        log.info("removed retained repository %s: over the namespace's limit of %d", copy.path, most)


def retained(namespace: str | None = None, name: str | None = None) -> list[Retained]:
    """The retained copies (of one namespace, or one repository), oldest first."""
    root = retained_root()
    if not root.is_dir():
        return []
    out = []
    folders = [root / namespace] if namespace else sorted(p for p in root.iterdir() if not p.name.startswith("."))
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in folder.iterdir():
            match = _NAME.match(path.name)
            if match is None or (name is not None and match["name"] != name):
                continue
            deleted_at = datetime.strptime(match["stamp"], _STAMP).replace(tzinfo=UTC)
            out.append(Retained(folder.name, match["name"], deleted_at, path))
    return sorted(out, key=lambda r: (r.deleted_at, int(_NAME.match(r.path.name)["n"] or 1)))


def restore(namespace: str, name: str, stamp: str | None = None) -> Retained:
    """Put the newest retained copy of ``namespace/name`` (or the one deleted at
    ``stamp``) back as its hosted repository. The caller checked that a hosted
    GitRepository of that name exists; its repository must have no refs yet
    (nothing pushed since it was created again), so nothing is overwritten."""
    copies = retained(namespace, name)
    if stamp:
        copies = [c for c in copies if c.stamp == stamp]
    if not copies:
        which = f" deleted at {stamp}" if stamp else ""
        raise RestoreError(f"no retained repository {namespace}/{name}{which}")
    chosen = copies[-1]
    target = gitstore.hosted_path(namespace, name)
    if _has_refs(target):
        raise RestoreError(
            f"the hosted repository {namespace}/{name} already has commits: restoring would replace them "
            "(delete and create the GitRepository again, then restore)"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    aside = target.with_name(f".{target.name}.replaced-{uuid.uuid4().hex[:8]}")
    if target.exists():
        os.rename(target, aside)
        if _has_refs(aside):
            # A push landed between the check and the move: put it back.
            os.rename(aside, target)
            raise RestoreError(f"a push to {namespace}/{name} arrived meanwhile: nothing restored")
    try:
        os.rename(chosen.path, target)
    except OSError as exc:
        # Created again meanwhile (a clone or push recreates an empty one).
        raise RestoreError(f"cannot restore {namespace}/{name}: {exc.strerror}; try again") from None
    finally:
        _remove(aside)
    log.info("restored hosted repository %s/%s from %s", namespace, name, chosen.path)
    return chosen


def expire(now: datetime | None = None, limit: int = 20) -> tuple[int, bool]:
    """Remove up to ``limit`` retained copies past the retention (and claims a
    killed worker left); returns (removed, whether more are due)."""
    root = retained_root()
    if not root.is_dir():
        return 0, False
    cutoff = (now or datetime.now(UTC)) - _retention()
    due = [p for p in root.iterdir() if p.name.startswith(_CLAIM) and _abandoned(p.name)]
    due += [r.path for r in retained() if r.deleted_at <= cutoff]
    removed = 0
    for path in due[:limit]:
        claim = root / f"{_CLAIM}{int(time.time())}-{uuid.uuid4().hex}"
        try:
            os.rename(path, claim)
        except FileNotFoundError:
            continue  # another worker claimed it
        _remove(claim)
        removed += 1
        log.info("expired retained repository %s", path)
    for folder in root.iterdir():
        if folder.is_dir() and not folder.name.startswith("."):
            try:
                folder.rmdir()  # only once empty
            except OSError:
                pass
    return removed, len(due) > limit


def _abandoned(claim: str) -> bool:
    """Whether a claim is older than ``CLAIM_STALE_SECONDS`` (its worker was
    killed): a live claim is left to its worker, which counts it once."""
    match = re.match(rf"{re.escape(_CLAIM)}(\d+)-", claim)
    return match is None or time.time() - int(match[1]) > CLAIM_STALE_SECONDS


def _remove(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
