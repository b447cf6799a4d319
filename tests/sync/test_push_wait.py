"""``git push -o wait``: the push stays open until the Syncs are Ready or have
failed (or the wait is over), prints their progress as ``remote:`` lines, and
its exit status says whether it worked. Real git, real server, real workers.

Nothing runs workloads here, so a test plays the Job controller by writing the
Job's ``/status`` with kubectl, as the controller would.
"""

from __future__ import annotations

import json
import subprocess
import threading

from sync_gitops import (
    Work,
    create,
    hosted_sync,
    pods_ready,
    sync_namespace,
    unique,
    wait_for,
)
from user_kubeconfigs import new_user

API = "sync.kapi.dev/v1"


def _setup(server, tmp_path, **sync_spec) -> tuple[str, Work]:
    return hosted_sync(server, tmp_path, "pushwait", **sync_spec)


def _push(work: Work, message: str, *options: str) -> subprocess.CompletedProcess:
    work.git("add", "-A")
    work.git("commit", "-q", "--allow-empty", "-m", message)
    return work.git("push", *[f"-o{o}" for o in options], "origin", "HEAD:main", check=False)


def _lines(done: subprocess.CompletedProcess) -> list[str]:
    """The push's ``remote: kapi: ...`` lines, without the prefix."""
    return [line.removeprefix("remote: ").rstrip() for line in done.stderr.splitlines()
            if line.startswith("remote: kapi: ")]


def _remote_main(work: Work) -> str:
    return work.git("ls-remote", "origin", "refs/heads/main").stdout.split()[0]


def _head(work: Work) -> str:
    return work.git("rev-parse", "HEAD").stdout.strip()


def _sync(server, ns: str) -> dict:
    return json.loads(server.kubectl("get", "syncs", "app", "-n", ns, "-o", "json").stdout)


def _conditions(sync: dict) -> dict[str, dict]:
    return {c["type"]: c for c in (sync.get("status") or {}).get("conditions") or []}


def _configmap(name: str, value: str = "1") -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"v": value}}


def _deployment(name: str) -> dict:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}},
    }


def test_wait_returns_once_the_sync_is_ready(kapi_server, tmp_path):
    """Exit 0 once the Sync applied the pushed commit: its objects exist the
    moment the push returns, and the lines said what was applied and pruned."""
    ns, work = _setup(kapi_server, tmp_path)
    work.write("a.yaml", _configmap("a"))
    work.write("b.yaml", _configmap("b"))
    done = _push(work, "first", "wait")
    assert done.returncode == 0, done.stderr
    lines = _lines(done)
    head = _head(work)
    assert "kapi: -o wait: pushed; waiting up to 2m for the Syncs" in lines
    assert f"kapi: GitRepository {ns}/app: fetched main@sha1:{head}" in lines
    assert f"kapi: Sync {ns}/app: Ready: applied main@sha1:{head}: 2 applied, 0 pruned" in lines
    assert lines[-1].startswith("kapi: -o wait: done (")
    kapi_server.kubectl("get", "configmap", "a", "b", "-n", ns)
    assert _remote_main(work) == head
    # git's own report: the ref is updated as by any push.
    assert "HEAD -> main" in done.stderr and "rejected" not in done.stderr

    work.write("a.yaml", _configmap("a", "2"))
    work.remove("b.yaml")
    done = _push(work, "change a, drop b", "wait=1m")
    assert done.returncode == 0, done.stderr
    assert f"kapi: Sync {ns}/app: Ready: applied main@sha1:{_head(work)}: 1 applied, 1 pruned" in _lines(done)
    assert kapi_server.kubectl("get", "configmap", "a", "-n", ns, "-o", "jsonpath={.data.v}").stdout == "2"
    assert kapi_server.kubectl("get", "configmap", "b", "-n", ns, check=False).returncode != 0


def test_wait_fails_the_push_when_the_health_check_fails(kapi_server, tmp_path):
    """A Job that fails its health check (``spec.wait``) fails the push: exit
    status non-zero, the message names the Sync and the reason, and says the
    push happened: the ref is updated and the Job applied all the same."""
    ns, work = _setup(kapi_server, tmp_path, wait=True, timeout="10m")
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "once"},
           "spec": {"activeDeadlineSeconds": 0,
                    "template": {"spec": {"restartPolicy": "Never",
                                          "containers": [{"name": "c", "image": "busybox"}]}}}}
    work.write("job.yaml", job)
    # The Job controller fails the Job as it starts it (its deadline is 0 s:
    # DeadlineExceeded). Whether the Sync's first health check comes before
    # that (a "Waiting for" line) or after is a race; a started Job counts as
    # healthy (kstatus), so a later deadline would let the push succeed first.
    done = _push(work, "job", "wait=5m")
    assert done.returncode != 0, done.stderr
    lines = _lines(done)
    assert any(line.startswith(f"kapi: Sync {ns}/app failed: HealthCheckFailed: health check failed: "
                               f"[Job/{ns}/once status: 'Failed'") for line in lines), lines
    assert f"! [remote rejected] HEAD -> main (pushed, but Sync {ns}/app failed: HealthCheckFailed:" \
        in done.stderr
    assert _remote_main(work) == _head(work)
    kapi_server.kubectl("get", "job", "once", "-n", ns)


def test_wait_times_out_when_the_sync_stays_unready(kapi_server, tmp_path):
    """``-o wait=3s`` and a Deployment nobody makes available: the push ends
    after 3 s, non-zero, saying what it still waited for; the revision is
    pushed and applied, the Sync goes on waiting by itself. (3 s: the apply
    of one Deployment takes well under a second; the rest is sat out.)"""
    ns, work = _setup(kapi_server, tmp_path, wait=True, timeout="10m")
    work.write("web.yaml", _deployment("web"))
    done = _push(work, "web", "wait=3s")
    assert done.returncode != 0, done.stderr
    lines = _lines(done)
    assert any(line.startswith("kapi: -o wait: timed out after 3s; still waiting for: "
                               f"Sync {ns}/app: ") for line in lines), lines
    assert f"! [remote rejected] HEAD -> main (pushed, but timed out after 3s waiting for Sync {ns}/app)" \
        in done.stderr
    assert _remote_main(work) == _head(work)
    kapi_server.kubectl("get", "deployment", "web", "-n", ns)


def test_an_invalid_wait_is_refused_before_anything_happens(kapi_server, tmp_path):
    """``-o wait=banana``: refused with a line saying what is accepted; the
    ref does not move, nothing is validated or applied."""
    ns, work = _setup(kapi_server, tmp_path)
    work.write("a.yaml", _configmap("a"))
    assert _push(work, "first").returncode == 0
    before = _remote_main(work)
    work.write("b.yaml", _configmap("b"))
    done = _push(work, "second", "wait=banana")
    assert done.returncode != 0
    assert "remote: kapi: push refused: -o wait=banana is not a duration: use -o wait (2m), or e.g. " \
           "-o wait=30s, -o wait=5m, -o wait=1m30s" in done.stderr
    assert "! [remote rejected] HEAD -> main (invalid -o wait)" in done.stderr
    assert "plan:" not in done.stderr  # not even validated
    assert _remote_main(work) == before
    assert kapi_server.kubectl("get", "configmap", "b", "-n", ns, check=False).returncode != 0

    done = _push(work, "third", "wait=90")
    assert done.returncode != 0
    assert "remote: kapi: push refused: -o wait=90: give a unit (e.g. -o wait=90s)" in done.stderr
    assert _remote_main(work) == before


def test_a_push_that_leaves_the_tracked_branch_alone_has_nothing_to_wait_for(kapi_server, tmp_path):
    """``-o wait`` on a push of another branch (a preview): said, and the push
    returns as it would without the option."""
    ns, work = _setup(kapi_server, tmp_path)
    work.write("a.yaml", _configmap("a"))
    work.git("add", "-A")
    work.git("commit", "-q", "-m", "preview")
    done = work.git("push", "-o", "wait", "origin", "HEAD:refs/heads/try", check=False)
    assert done.returncode == 0, done.stderr
    assert ("remote: kapi: -o wait: this push does not update refs/heads/main, which the Syncs follow; "
            "nothing to wait for") in done.stderr
    assert "kapi: preview of branch try" in done.stderr


def _mark_available(server, ns: str, name: str) -> None:
    """Play the kubelet: the Deployment's one Pod Running and Ready (kapi's
    ReplicaSet and Deployment controllers write the status that follows)."""
    pods_ready(server, ns, name, 1)


def test_waits_at_once_are_bounded(kapi_server, tmp_path):
    """Each API process lets ``KAPI_SYNC_PUSH_WAITS`` (2) pushes wait at once;
    the test server runs 2 processes, so of 5 pushes waiting on Deployments
    nobody makes available, at least one is refused at once, with nothing
    changed. The others end Ready once the Deployments are available."""
    setups = [_setup(kapi_server, tmp_path, wait=True, timeout="10m") for _ in range(5)]
    for _, work in setups:
        work.write("web.yaml", _deployment("web"))
    results: dict[str, subprocess.CompletedProcess] = {}
    threads = [threading.Thread(target=lambda ns=ns, work=work: results.setdefault(ns, _push(work, "web", "wait=2m")))
               for ns, work in setups]
    for thread in threads:
        thread.start()
    busy = "remote: kapi: push refused: this server is already waiting for 2 pushes (KAPI_SYNC_PUSH_WAITS)"
    try:
        wait_for(lambda: [ns for ns, done in list(results.items()) if busy in done.stderr], timeout=120,
                 what="a push refused for too many waits")
        for ns, _ in setups:
            def settled(ns=ns) -> str:
                """"refused" (perhaps later than the first), or "waiting" with its Deployment applied."""
                if ns in results:
                    return "refused"
                found = kapi_server.kubectl("get", "deployment", "web", "-n", ns, check=False)
                return "waiting" if found.returncode == 0 else ""

            if wait_for(settled, timeout=120, what="each push refused or waiting") == "waiting":
                _mark_available(kapi_server, ns, "web")
    finally:
        for thread in threads:
            thread.join(timeout=180)
    assert len(results) == 5
    for ns, work in setups:
        done = results[ns]
        if busy in done.stderr:
            assert done.returncode != 0
            assert "! [remote rejected] HEAD -> main (too many waiting pushes)" in done.stderr
            assert work.git("ls-remote", "origin", "refs/heads/main").stdout == ""  # nothing pushed
        else:
            assert done.returncode == 0, done.stderr
            # Health came in a later pass than the apply: the counts are the apply's.
            assert f"kapi: Sync {ns}/app: Ready: applied main@sha1:{_head(work)}: 1 applied, 0 pruned, healthy" \
                in _lines(done)


def test_without_the_option_the_push_returns_at_once(kapi_server, tmp_path):
    """No ``-o wait``: the push returns when git has the revision, as before,
    though the Sync cannot be Ready (its Deployment never becomes available)."""
    ns, work = _setup(kapi_server, tmp_path, wait=True, timeout="10m")
    work.write("web.yaml", _deployment("web"))
    done = _push(work, "web")
    assert done.returncode == 0, done.stderr
    assert "-o wait" not in done.stderr
    assert _remote_main(work) == _head(work)
    ready = _conditions(_sync(kapi_server, ns)).get("Ready", {})
    assert ready.get("status") != "True"
    assert not (_sync(kapi_server, ns).get("status") or {}).get("lastAppliedRevision")


def test_the_wait_follows_only_the_syncs_the_pusher_may_read(kapi_server, tmp_path):
    """A pusher who may update the repository and get one of its two Syncs:
    that one is followed to Ready; the other is named, as in the plan, but
    neither its state nor its outcome is shown, nor waited for."""
    ns = unique("pushwait-rbac")
    user, token = new_user(kapi_server, "pusher")
    create(
        kapi_server,
        *sync_namespace(ns),
        {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns}, "spec": {}},
        *[{"apiVersion": API, "kind": "Sync", "metadata": {"name": name, "namespace": ns},
           "spec": {"sourceRef": {"name": "app"}, "path": f"./{name}"}} for name in ("visible", "hidden")],
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "pusher", "namespace": ns},
         "rules": [{"apiGroups": ["sync.kapi.dev"], "resources": ["gitrepositories"], "verbs": ["get", "update"]},
                   {"apiGroups": ["sync.kapi.dev"], "resources": ["syncs"], "verbs": ["get"],
                    "resourceNames": ["visible"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": "pusher", "namespace": ns},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pusher"},
         "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]},
    )
    work = Work(kapi_server, ns, "app", tmp_path / ns)
    work.git("remote", "set-url", "origin", work.remote.replace(kapi_server.token, token))
    work.write("visible/a.yaml", _configmap("a"))
    work.write("hidden/b.yaml", _configmap("b"))
    done = _push(work, "both", "wait")
    assert done.returncode == 0, done.stderr
    lines = _lines(done)
    assert f"kapi: Sync {ns}/visible: Ready: applied main@sha1:{_head(work)}: 1 applied, 0 pruned" in lines
    hidden = [line for line in lines if line.startswith(f"kapi: Sync {ns}/hidden") and "plan" not in line
              and not line.startswith(f"kapi: Sync {ns}/hidden:   ")]
    assert hidden == [f'kapi: Sync {ns}/hidden: not waited for: syncs.sync.kapi.dev "hidden" is forbidden: '
                      f'User "{user}" cannot get resource "syncs" in API group "sync.kapi.dev" '
                      f'in the namespace "{ns}"'], hidden
