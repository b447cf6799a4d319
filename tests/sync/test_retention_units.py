"""``sync.retention`` on real directories and real git, without a server:
naming, bounded batches, and several workers expiring the same copies at once."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import django
import pytest

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
django.setup()

from sync import gitstore, retention  # noqa: E402

NOW = datetime(2026, 11, 25, 12, 0, 0, tzinfo=UTC)


@pytest.fixture
def data_dir(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("KAPI_DATA_DIR", str(tmp_path))
    return tmp_path


def _hosted_with_commit(namespace: str, name: str) -> Path:
    path = gitstore.ensure_hosted(namespace, name)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@e"}
    tree = subprocess.run(["git", "mktree"], input="", cwd=path, env=env, capture_output=True, text=True,
                          check=True).stdout.strip()
    commit = subprocess.run(["git", "commit-tree", tree, "-m", name], cwd=path, env=env, capture_output=True,
                            text=True, check=True).stdout.strip()
    subprocess.run(["git", "update-ref", "refs/heads/main", commit], cwd=path, check=True)
    return path


def test_two_deletions_in_one_second_keep_both_and_restore_takes_the_newest(data_dir):
    _hosted_with_commit("ns", "app")
    first = retention.retain("ns", "app", NOW)
    _hosted_with_commit("ns", "app")
    second = retention.retain("ns", "app", NOW)
    assert (first.name, second.name) == ("app-20261125T120000Z.git", "app-20261125T120000Z-2.git")
    assert retention.retain("ns", "app", NOW) is None  # nothing left to move: idempotent
    gitstore.ensure_hosted("ns", "app")  # the namesake's empty repository
    assert retention.restore("ns", "app").path == second
    assert [c.path for c in retention.retained("ns", "app")] == [first]


def test_an_empty_repository_is_not_kept(data_dir):
    gitstore.ensure_hosted("ns", "empty")
    assert retention.retain("ns", "empty", NOW) is None
    assert not gitstore.hosted_path("ns", "empty").exists()
    assert retention.retained() == []


def test_an_unreadable_repository_is_kept_not_deleted(data_dir):
    """When git cannot tell whether a directory holds history, it is retained."""
    broken = gitstore.hosted_path("ns", "broken")
    (broken / "objects" / "pack").mkdir(parents=True)
    (broken / "objects" / "pack" / "pack-1.pack").write_bytes(b"PACK")
    kept = retention.retain("ns", "broken", NOW)
    assert kept is not None and (kept / "objects" / "pack" / "pack-1.pack").exists()


def _expire_until_done(_: int) -> int:
    removed = 0
    while True:
        count, more = retention.expire(NOW, limit=5)
        removed += count
        if not more:
            return removed


def test_workers_racing_to_expire_remove_each_copy_once(data_dir):
    """Four processes expire 40 old copies in batches of 5: every old copy is
    removed exactly once (claims are renames), young copies stay, and a claim
    left by a killed worker goes too."""
    root = retention.retained_root()
    old = NOW - timedelta(days=31)
    for i in range(40):
        (root / f"ns{i % 4}" / f"app{i}-{old:%Y%m%dT%H%M%SZ}.git" / "objects").mkdir(parents=True)
    for i in range(2):
        (root / "ns0" / f"young{i}-{NOW - timedelta(days=29):%Y%m%dT%H%M%SZ}.git").mkdir(parents=True)
    (root / ".expiring-1000-killed" / "objects").mkdir(parents=True)

    with multiprocessing.get_context("fork").Pool(4) as pool:
        removed = sum(pool.map(_expire_until_done, range(4)))
    assert removed == 41
    assert sorted(c.name for c in retention.retained()) == ["young0", "young1"]
    assert sorted(p.name for p in root.iterdir()) == ["ns0"]


def test_a_live_claim_is_left_to_its_worker(data_dir):
    root = retention.retained_root()
    live = root / f".expiring-{int(time.time())}-busy"
    live.mkdir(parents=True)
    assert retention.expire(NOW) == (0, False)
    assert live.exists()


def test_a_namespace_keeps_at_most_its_limit_of_copies(data_dir, settings_limit):
    """Create, push, delete in a loop: only the newest copies of the namespace stay."""
    for minute in range(5):
        _hosted_with_commit("loop", f"r{minute}")
        retention.retain("loop", f"r{minute}", NOW + timedelta(minutes=minute))
    assert [c.name for c in retention.retained("loop")] == ["r2", "r3", "r4"]


@pytest.fixture
def settings_limit():
    from django.conf import settings

    old = settings.SYNC_GIT_RETENTION_MAX_PER_NAMESPACE
    settings.SYNC_GIT_RETENTION_MAX_PER_NAMESPACE = 3
    yield
    settings.SYNC_GIT_RETENTION_MAX_PER_NAMESPACE = old
