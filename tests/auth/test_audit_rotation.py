"""Audit log rotation: kube-apiserver's maxsize / maxbackup / maxage, shared by
several writing processes.

The writers are real processes calling ``kapi.auth.audit.write`` as the API
workers do, started together and rotating the same file; every line must land
once, whole, in the log or a backup, and no file may pass the size limit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from kapi_testserver import ROOT

from kapi.auth.auditlog import MIB, Limits, backups, limits_from_env

WRITER = r"""
import os, sys, time
from datetime import UTC, datetime
from kapi.auth import audit
worker, count, go = sys.argv[1], int(sys.argv[2]), sys.argv[3]
while not os.path.exists(go):
    time.sleep(0.001)
for i in range(count):
    audit.write(audit.event(
        audit_id=f"{worker}-{i}", received=datetime.now(UTC), request_uri="/api/v1/namespaces/default/configmaps",
        verb="create", user=None, impersonated=None, source_ips=["127.0.0.1"], user_agent="x" * 200,
        object_ref={"resource": "configmaps", "namespace": "default", "name": f"cm-{i}"}, code=201))
"""


def _run_writers(log: Path, env: dict[str, str], workers: int, count: int) -> None:
    go = log.parent / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, f"w{w}", str(count), str(go)],
            env={**os.environ, "KAPI_AUDIT_LOG": str(log), **env}, cwd=ROOT,
        )
        for w in range(workers)
    ]
    time.sleep(0.5)
    go.touch()
    for proc in procs:
        assert proc.wait(timeout=300) == 0


def _files(log: Path) -> list[Path]:
    return [log] + [path for _, path in backups(log)]


def test_defaults_bound_the_log() -> None:
    """Unset, the limits are 100 MiB per file, 5 backups, 30 days: at most 600 MiB."""
    assert limits_from_env({}) == Limits(max_bytes=100 * MIB, max_backups=5, max_age_days=30)


def test_several_processes_rotate_without_losing_or_tearing_lines(tmp_path: Path) -> None:
    """Six processes append 2,500 events each to a log rotated every 0.25 MiB:
    each event is in exactly one file, as one whole JSON line, and no file is
    over the limit."""
    log = tmp_path / "audit.log"
    workers, count = 6, 2500
    _run_writers(log, {"KAPI_AUDIT_LOG_MAXSIZE": "0.25", "KAPI_AUDIT_LOG_MAXBACKUP": "0"},
                 workers, count)
    files = _files(log)
    assert len(files) > 10
    seen: list[str] = []
    for path in files:
        data = path.read_bytes()
        assert len(data) <= MIB // 4, path
        assert data.endswith(b"\n")
        for line in data.splitlines():
            seen.append(json.loads(line)["auditID"])
    assert len(seen) == workers * count
    assert set(seen) == {f"w{w}-{i}" for w in range(workers) for i in range(count)}
    assert all(oct(p.stat().st_mode & 0o777) == "0o600" for p in files)


def test_maxbackup_keeps_the_newest_backups(tmp_path: Path) -> None:
    """With KAPI_AUDIT_LOG_MAXBACKUP=3 only the three newest backups remain,
    and they with the current file hold the newest events."""
    log = tmp_path / "audit.log"
    _run_writers(log, {"KAPI_AUDIT_LOG_MAXSIZE": "0.1", "KAPI_AUDIT_LOG_MAXBACKUP": "3"}, 3, 1500)
    kept = backups(log)
    assert len(kept) == 3
    ids = [json.loads(line)["auditID"] for path in _files(log) for line in path.read_bytes().splitlines()]
    # What is kept is the newest: of each writer, a run of its last events.
    assert "w0-0" not in ids
    for w in range(3):
        mine = sorted(int(i.split("-")[1]) for i in ids if i.startswith(f"w{w}-"))
        if mine:
            assert mine == list(range(mine[0], 1500))
    assert any(i.endswith("-1499") for i in ids)


def test_maxage_removes_old_backups(tmp_path: Path) -> None:
    """Backups older than KAPI_AUDIT_LOG_MAXAGE days go when a process opens the
    log (so also on a server that writes little); younger ones stay."""
    log = tmp_path / "audit.log"
    now = datetime.now(UTC)
    old = log.with_name(f"audit-{(now - timedelta(days=8)).strftime('%Y-%m-%dT%H-%M-%S')}.000.log")
    young = log.with_name(f"audit-{(now - timedelta(days=2)).strftime('%Y-%m-%dT%H-%M-%S')}.000.log")
    other = log.with_name("audit-notes.log")
    for path in (old, young, other):
        path.write_text("{}\n")
    _run_writers(log, {"KAPI_AUDIT_LOG_MAXAGE": "7"}, 1, 1)
    assert not old.exists()
    assert young.exists() and other.exists()
    assert len(log.read_bytes().splitlines()) == 1


def test_maxsize_zero_never_rotates(tmp_path: Path) -> None:
    """KAPI_AUDIT_LOG_MAXSIZE=0 turns rotation off (kube's meaning of 0)."""
    log = tmp_path / "audit.log"
    _run_writers(log, {"KAPI_AUDIT_LOG_MAXSIZE": "0"}, 2, 500)
    assert backups(log) == []
    assert len(log.read_bytes().splitlines()) == 1000
