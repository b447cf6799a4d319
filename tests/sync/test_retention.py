"""Deleting a hosted GitRepository keeps its repository recoverable.

The real server (tests/sync/conftest.py's, with the expiry sweep every second), real git over
smart HTTP and the real ``manage.py sync retained|restore`` commands: a
deleted hosted repository is kept under ``git/.deleted``, restored by an
administrator under a GitRepository of that name created again (never
inherited by it silently), and removed by the periodic sweep once older than
``KAPI_GIT_RETENTION_DAYS``; mirrors of remote repositories are removed at once.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sync_gitops import Work, create, sync_namespace, unique, wait_for

API = "sync.kapi.dev/v1"
ROOT = Path(__file__).resolve().parents[2]




@pytest.fixture
def server(timers_server):
    return timers_server


def _manage(server, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "manage.py"), "sync", *args], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, env={**os.environ, "KAPI_DATA_DIR": str(server.data_dir)})


def _repository(server, ns: str, name: str = "app") -> None:
    create(server, {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": name, "namespace": ns},
                    "spec": {}})


def _sync(server, ns: str, name: str = "app") -> None:
    create(server, {"apiVersion": API, "kind": "Sync", "metadata": {"name": name, "namespace": ns},
                    "spec": {"sourceRef": {"name": name}, "path": "./deploy"}})


def _namespace(server) -> str:
    ns = unique("retain")
    create(server, *sync_namespace(ns))
    return ns


def _cm(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"v": "1"}}


def _gone(server, *args: str) -> bool:
    return server.kubectl("get", *args, check=False).returncode != 0


def _delete(server, kind: str, ns: str, name: str = "app") -> None:
    server.kubectl("delete", kind, name, "-n", ns, "--timeout=60s")
    assert _gone(server, kind, name, "-n", ns)


def _retained(server, ns: str) -> list[list[str]]:
    done = _manage(server, "retained", ns)
    assert done.returncode == 0, done.stderr
    return [line.split("\t") for line in done.stdout.splitlines()[1:]]


def _pushed(server, ns: str, tmp_path: Path, *messages: str) -> Work:
    work = Work(server, ns, "app", tmp_path)
    for index, message in enumerate(messages):
        work.write(f"deploy/cm{index}.yaml", _cm(f"cm{index}"))
        work.push(message)
    return work


def test_delete_recreate_and_restore_keeps_the_history(server, tmp_path):
    """Deleting the GitRepository retains its hosted repository; a GitRepository
    of the same name created again starts empty (nothing inherited), and
    ``sync restore`` brings back every commit: a clone shows the history and
    the Sync applies the restored revision again."""
    ns = _namespace(server)
    _repository(server, ns)
    _sync(server, ns)
    work = _pushed(server, ns, tmp_path / "first", "first commit", "second commit")
    head = work.git("rev-parse", "HEAD").stdout.strip()
    wait_for(lambda: not _gone(server, "configmap", "cm1", "-n", ns), what="the pushes to be applied")

    _delete(server, "sync", ns)  # prunes cm0 and cm1
    _delete(server, "gitrepository", ns)
    assert _gone(server, "configmap", "cm1", "-n", ns)
    assert not (server.data_dir / "git" / ns / "app.git").exists()
    (copy,) = _retained(server, ns)
    assert copy[:2] == [ns, "app"]

    _repository(server, ns)
    fresh = Work(server, ns, "app", tmp_path / "fresh")
    assert fresh.git("ls-remote", "origin").stdout == ""  # a namesake inherits nothing

    done = _manage(server, "restore", f"{ns}/app")
    assert done.returncode == 0, done.stderr
    assert f"restored {ns}/app as deleted at {copy[2]}" in done.stdout
    assert _retained(server, ns) == []

    clone = Work(server, ns, "app", tmp_path / "restored")
    log = clone.git("log", "--format=%s").stdout.splitlines()
    assert log == ["second commit", "first commit"]
    assert clone.git("rev-parse", "HEAD").stdout.strip() == head
    _sync(server, ns)
    wait_for(lambda: not _gone(server, "configmap", "cm1", "-n", ns), what="the restored revision to be applied")
    repo = server.kubectl("get", "gitrepository", "app", "-n", ns, "-o", "jsonpath={.status.artifact.revision}")
    assert repo.stdout == f"main@sha1:{head}"


def test_restore_refuses_what_would_lose_or_invent_history(server, tmp_path):
    """Restore needs a hosted GitRepository of that name and a repository
    without commits: it never overwrites pushes made since, and says why."""
    ns = _namespace(server)
    missing = _manage(server, "restore", f"{ns}/app")
    assert missing.returncode != 0
    assert f"GitRepository {ns}/app not found: create it again" in missing.stderr
    assert "Traceback" not in missing.stderr

    _repository(server, ns)
    none = _manage(server, "restore", f"{ns}/app")
    assert none.returncode != 0 and f"no retained repository {ns}/app" in none.stderr

    _pushed(server, ns, tmp_path / "old", "old history")
    _delete(server, "gitrepository", ns)
    _repository(server, ns)
    new = _pushed(server, ns, tmp_path / "new", "new history")
    busy = _manage(server, "restore", f"{ns}/app")
    assert busy.returncode != 0 and "already has commits" in busy.stderr
    assert new.git("ls-remote", "origin", "refs/heads/main").stdout.split()[0] == \
        new.git("rev-parse", "HEAD").stdout.strip()
    assert len(_retained(server, ns)) == 1

    # A repository deleted without a commit had nothing to lose: not retained.
    empty = _namespace(server)
    _repository(server, empty)
    Work(server, empty, "app", tmp_path / "empty")
    _delete(server, "gitrepository", empty)
    assert _retained(server, empty) == []


def test_expired_copies_are_removed_by_the_periodic_sweep(server, tmp_path):
    """A copy older than KAPI_GIT_RETENTION_DAYS (default 30) is removed by the
    beat task, as is a claim a killed worker left; younger copies stay."""
    ns = _namespace(server)
    for name in ("old", "young"):
        _repository(server, ns, name)
        work = Work(server, ns, name, tmp_path / name)
        work.write("a.yaml", _cm("a"))
        work.push(f"{name} commit")
        _delete(server, "gitrepository", ns, name)
    folder = server.data_dir / "git" / ".deleted" / ns
    (old,) = folder.glob("old-*.git")
    # Deleted 31 days ago, as far as the retention can tell.
    backdated = old.rename(folder / "old-20200101T000000Z.git")
    left = server.data_dir / "git" / ".deleted" / ".expiring-1000-killedworker"
    (left / "objects").mkdir(parents=True)

    wait_for(lambda: not backdated.exists() and not left.exists(), timeout=60, what="the sweep to expire")
    assert [row[1] for row in _retained(server, ns)] == ["young"]


def test_deleting_a_remote_repository_removes_its_mirror(server, tmp_path):
    """A mirror of a remote repository can be fetched again: it is removed at
    once and not retained."""
    ns = _namespace(server)
    _repository(server, ns)
    _pushed(server, ns, tmp_path / "origin", "upstream")
    token = base64.b64encode(server.token.encode()).decode()
    ca = base64.b64encode(server.ca_path.read_bytes()).decode()
    create(server,
           {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "creds", "namespace": ns},
            "data": {"token": token, "ca.crt": ca}},
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "mirror", "namespace": ns},
            "spec": {"url": f"{server.url}/git/{ns}/app.git", "interval": "1h", "secretRef": {"name": "creds"}}})
    mirror = server.data_dir / "sync" / "mirrors" / ns / "mirror.git"
    wait_for(lambda: server.kubectl("get", "gitrepository", "mirror", "-n", ns, "-o",
                                    "jsonpath={.status.artifact.revision}").stdout, what="the first fetch")
    assert (mirror / "HEAD").exists()
    _delete(server, "gitrepository", ns, "mirror")
    assert not mirror.exists()
    assert _retained(server, ns) == []
