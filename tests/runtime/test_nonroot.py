"""``serve`` as a non-root user, as the container image runs it.

The image runs kapi as user ``kapi`` owning only ``/data``. Here ``serve`` runs
as a system user made for the test (``useradd`` when absent; CI runs as root)
on a data directory that user owns, and the README's git example runs against
it: create a GitRepository and a Sync, clone the hosted repository over HTTPS,
push a manifest, see it applied. Everything ``serve`` and git wrote must
belong to that user.

The interpreter may live under a directory only root can enter (``/root/.pyenv``
here), so the user gets ``CAP_DAC_READ_SEARCH`` (read and traverse, never
write): every write is still checked against the non-root user.
"""

from __future__ import annotations

import json
import os
import pwd
import subprocess
from pathlib import Path

import pytest
from kapi_testserver import new_data_dir, remove_data_dir, start_server, stop_server
from sync_gitops import Work, create, wait_for

USER = "kapi-nonroot"


def _user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER],
            check=True,
        )
        return pwd.getpwnam(USER)


@pytest.fixture(scope="module")
def nonroot_server():
    user = _user()
    data_dir = new_data_dir()
    home = data_dir.parent / "home"
    home.mkdir()
    for path in (data_dir.parent, home):
        os.chown(path, user.pw_uid, user.pw_gid)
    wrapper = (
        "setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--clear-groups",
        "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search",
    )
    env = {**os.environ, "HOME": str(home), "USER": USER, "LOGNAME": USER}
    env.pop("DATABASE_URL", None)
    env.pop("CELERY_BROKER_URL", None)
    server = start_server(data_dir, env=env, wrapper=wrapper)
    try:
        yield server, user, home
    finally:
        try:
            stop_server(server)
        finally:
            remove_data_dir(data_dir)


def test_serve_runs_as_the_user_and_accepts_a_push(nonroot_server, tmp_path: Path) -> None:
    """A push to a hosted repository of a non-root serve is applied, and every
    file under the data directory and HOME belongs to that user."""
    server, user, home = nonroot_server
    import psutil

    serve = psutil.Process(server.process.pid)
    assert serve.uids().real == user.pw_uid
    assert all(p.uids().effective == user.pw_uid for p in serve.children(recursive=True))

    ns = "default"
    api = "sync.kapi.dev/v1"
    # The README's single-user grant: the Sync acts as default/default.
    server.kubectl("create", "clusterrolebinding", "kapi-sync-default", "--clusterrole=cluster-admin",
                   "--serviceaccount=default:default")
    create(
        server,
        {"apiVersion": api, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns},
         "spec": {}},
        {"apiVersion": api, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
         "spec": {"sourceRef": {"name": "app"}, "path": "./deploy"}},
    )
    work = Work(server, ns, "app", tmp_path / "app")
    work.write("deploy/cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": "pushed", "namespace": ns},
                                  "data": {"who": USER}})
    work.push("a ConfigMap")

    def applied():
        done = server.kubectl("get", "configmap", "pushed", "-n", ns, "-o", "json", check=False)
        return json.loads(done.stdout) if done.returncode == 0 else None

    cm = wait_for(applied, timeout=60, what="the pushed ConfigMap")
    assert cm["data"] == {"who": USER}

    hosted = server.data_dir / "git" / ns / "app.git"
    assert hosted.stat().st_uid == user.pw_uid
    assert (hosted / "refs" / "heads" / "main").exists() or (hosted / "packed-refs").exists()
    foreign = [
        str(p) for root in (server.data_dir, home)
        for p in [root, *root.rglob("*")]
        if p.exists() and not p.is_symlink() and p.lstat().st_uid != user.pw_uid
    ]
    assert foreign == []

