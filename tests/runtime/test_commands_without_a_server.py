"""Commands that need a running kapi say so in one line when there is none.

Run from a directory with no kapi, or with a mistyped ``--data-dir``, ``sync
reconcile`` and ``kubeconfig --user`` answer with one error line naming the
data directory they looked at and how to point at another; no loop of
connection-pool warnings, no traceback. No server is started here: these are
the commands as a new user first runs them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k not in ("KAPI_DATA_DIR", "DATABASE_URL")}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "args",
    [
        ("sync", "reconcile", "default/app"),
        ("sync", "reconcile", "default/app", "--data-dir", "{missing}"),
        ("sync", "--data-dir", "{missing}", "reconcile", "default/app"),
        ("kubeconfig", "--user", "alice", "--data-dir", "{missing}"),
    ],
)
def test_no_kapi_database_is_one_line(tmp_path, args):
    """Exit 1 with one line on stderr: where it looked, how to point elsewhere."""
    missing = tmp_path / "no-kapi-here"
    args = tuple(a.format(missing=missing) for a in args)
    result = _run(*args, cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    looked = missing if "--data-dir" in args else tmp_path / ".kapi"
    assert lines[0] == (
        f"CommandError: no kapi database at {looked} (is `manage.py serve` running there?): "
        "point at one with --data-dir DIR (or KAPI_DATA_DIR=DIR), or DATABASE_URL"
    )


def test_unreachable_database_url_is_one_line_without_its_password(tmp_path):
    """A DATABASE_URL that does not answer: one line, the password masked."""
    url = "postgresql://kapi:hunter2@127.0.0.1:9/kapi"
    result = _run("sync", "reconcile", "default/app", cwd=tmp_path, env={"DATABASE_URL": url})
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("CommandError: no kapi database answers at DATABASE_URL (postgresql://kapi:***@127.0.0.1:9/kapi)")
    assert "hunter2" not in result.stderr
