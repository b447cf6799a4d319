"""The sync's files do not outlive their GitRepository, nor interrupted work.

Run through the real beat task (``kapi.sync.housekeeping``, sent to the
server's broker with ``celery call``), on the session server's data directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from kapi_testserver import ROOT
from sync_gitops import Work, create, sync_namespace, unique, wait_for

from kapi.runtime import config

API = "sync.kapi.dev/v1"


def _pair(server, ns: str, name: str, tmp_path: Path) -> Work:
    create(
        server,
        {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": name, "namespace": ns},
         "spec": {}},
        {"apiVersion": API, "kind": "Sync", "metadata": {"name": name, "namespace": ns},
         "spec": {"sourceRef": {"name": name}, "path": "./deploy"}},
    )
    work = Work(server, ns, name, tmp_path / name)
    work.write("deploy/cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": f"cm-{name}"}, "data": {"a": "b"}})
    work.push("one")
    return work


def _housekeeping(server, grace_seconds: float) -> None:
    data = server.data_dir
    env = {**os.environ, "KAPI_DATA_DIR": str(data),
           "CELERY_BROKER_URL": f"redis+socket://{data / 'redis' / 'redis.sock'}",
           "DATABASE_URL": config._embedded_postgres_url(data / "postgres")}
    done = subprocess.run(
        [sys.executable, "-m", "celery", "-A", "kapi", "call", "kapi.sync.housekeeping",
         "--kwargs", f'{{"grace_seconds": {grace_seconds}}}'],
        env=env, cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr


def test_files_of_a_deleted_repository_and_stale_temporaries_go(kapi_server, tmp_path):
    """After a GitRepository is deleted its checkouts are removed by the
    housekeeping task; a living one keeps its repository and checkouts;
    temporary entries an hour old go, younger ones stay."""
    ns = unique("house")
    create(kapi_server, *sync_namespace(ns))
    _pair(kapi_server, ns, "doomed", tmp_path)
    _pair(kapi_server, ns, "kept", tmp_path)
    data = kapi_server.data_dir
    checkouts = data / "sync" / "checkouts" / ns
    wait_for(lambda: (checkouts / "doomed").is_dir() and (checkouts / "kept").is_dir()
             and any((checkouts / "kept").iterdir()), timeout=60, what="checkouts of both")

    old_tmp = checkouts / "kept" / ".0123456789ab-interrupted"
    young_tmp = checkouts / "kept" / ".ba9876543210-running"
    old_hosted_tmp = data / "git" / ns / ".kept-halfmade"
    for path in (old_tmp, young_tmp, old_hosted_tmp):
        path.mkdir()
    hour_ago = time.time() - 3700
    os.utime(old_tmp, (hour_ago, hour_ago))
    os.utime(old_hosted_tmp, (hour_ago, hour_ago))

    kapi_server.kubectl("delete", "sync,gitrepository", "doomed", "-n", ns)
    wait_for(lambda: kapi_server.kubectl("get", "gitrepository", "doomed", "-n", ns,
                                         check=False).returncode != 0,
             timeout=60, what="the GitRepository to go")
    assert not (data / "git" / ns / "doomed.git").exists()
    assert (checkouts / "doomed").is_dir()  # the finalizer leaves checkouts
    # The deleted repository is retained (sync.retention), not a temporary:
    # however old its directory, housekeeping leaves it to its expiry.
    retained = data / "git" / ".deleted"
    assert any((retained / ns).iterdir())
    os.utime(retained, (hour_ago, hour_ago))

    _housekeeping(kapi_server, grace_seconds=0)
    wait_for(lambda: not (checkouts / "doomed").exists() and not old_tmp.exists(),
             timeout=60, what="housekeeping to remove the checkouts")
    assert not old_hosted_tmp.exists()
    assert young_tmp.is_dir()
    assert any((retained / ns).iterdir())
    assert (data / "git" / ns / "kept.git" / "HEAD").is_file()
    assert any(p for p in (checkouts / "kept").iterdir() if not p.name.startswith("."))

