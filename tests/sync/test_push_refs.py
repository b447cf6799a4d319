"""Validate-on-push for every kind of ``spec.ref`` and every odd revision.

Real git pushes to the real server: a repository tracking a tag validates a
push of that tag (and not of other refs); one pinned to a commit validates
only a push that brings that very commit; a commit that deletes every file,
a missing ``spec.path`` or an invalid ``spec.ignore`` pattern are refused with
a clear ``remote:`` line (and end as a clear Sync condition when validation is
off), never Django's HTML error page; hostile calls to the pre-receive
endpoint get a refusal, not a 500.
"""

from __future__ import annotations

import json
import subprocess

from sync_gitops import Work, create, sync_namespace, unique, wait_for

from tests.sync.test_prereceive import _post

API = "sync.kapi.dev/v1"


def _cm(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"v": "1"}}


def _setup(server, tmp_path, path: str = "./deploy", **repo_spec) -> tuple[str, Work]:
    ns = unique("pushref")
    create(server,
           *sync_namespace(ns),
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns},
            "spec": repo_spec},
           {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
            "spec": {"sourceRef": {"name": "app"}, "path": path}})
    return ns, Work(server, ns, "app", tmp_path / "work")


def _exists(server, ns: str, name: str) -> bool:
    return server.kubectl("get", "configmap", name, "-n", ns, check=False).returncode == 0


def _get(server, kind: str, ns: str) -> dict:
    return json.loads(server.kubectl("get", kind, "app", "-n", ns, "-o", "json").stdout)


def _ready(obj: dict) -> dict:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == "Ready"), {})


def _commit(work: Work, message: str) -> str:
    work.git("add", "-A")
    work.git("commit", "-q", "--allow-empty", "-m", message)
    return work.git("rev-parse", "HEAD").stdout.strip()


def _no_error_page(done: subprocess.CompletedProcess) -> None:
    for marker in ("<html", "<!DOCTYPE", "Traceback", "Server Error"):
        assert marker not in done.stderr, done.stderr


def test_a_tag_tracking_repository_validates_pushes_of_its_tag(kapi_server, tmp_path):
    """spec.ref.tag: pushing the tag to an invalid revision is refused with the
    Sync's problem; pushing other refs is not validated; a good tag is applied."""
    ns, work = _setup(kapi_server, tmp_path, ref={"tag": "v1"})
    work.write("deploy/good.yaml", _cm("good"))
    work.push("good")
    work.git("tag", "-a", "v1", "-m", "release 1")
    done = work.git("push", "origin", "refs/tags/v1", check=False)
    assert done.returncode == 0, done.stderr
    wait_for(lambda: _exists(kapi_server, ns, "good"), what="the tagged revision to be applied")
    tagged = work.git("ls-remote", "origin", "refs/tags/v1^{}").stdout.split()[0]

    work.write("deploy/bad.yaml", _cm("Not_A_Valid_Name"))
    branch = work.push("bad on main, which the repository does not track", check=False)
    assert branch.returncode == 0, branch.stderr
    work.git("tag", "-f", "-a", "v1", "-m", "release 1, broken")
    done = work.git("push", "-f", "origin", "refs/tags/v1", check=False)
    assert done.returncode != 0
    assert f"remote: kapi: Sync {ns}/app:" in done.stderr and "metadata.name" in done.stderr
    assert "push to tag v1 rejected" in done.stderr
    _no_error_page(done)
    assert work.git("ls-remote", "origin", "refs/tags/v1^{}").stdout.split()[0] == tagged

    # A lightweight tag is validated the same way.
    work.git("tag", "-f", "v1")
    light = work.git("push", "-f", "origin", "refs/tags/v1", check=False)
    assert light.returncode != 0 and "metadata.name" in light.stderr

    # Deleting the tracked tag is not refused, but the pusher is told.
    gone = work.git("push", "origin", ":refs/tags/v1", check=False)
    assert gone.returncode == 0, gone.stderr
    assert f"remote: kapi: warning: this push deletes refs/tags/v1, which GitRepository {ns}/app tracks" \
        in gone.stderr


def test_a_commit_pinned_repository_validates_only_a_push_bringing_its_commit(kapi_server, tmp_path):
    """spec.ref.commit: a push cannot move what is applied, so it is accepted
    with a note; but a push that brings the pinned commit itself validates it."""
    ns, work = _setup(kapi_server, tmp_path)
    work.write("deploy/a.yaml", _cm("a"))
    work.push("a")
    pinned = work.git("rev-parse", "HEAD").stdout.strip()
    wait_for(lambda: _exists(kapi_server, ns, "a"), what="commit a to be applied")
    kapi_server.kubectl("patch", "gitrepository", "app", "-n", ns, "--type=merge",
                        "-p", json.dumps({"spec": {"ref": {"commit": pinned}}}))

    work.write("deploy/bad.yaml", _cm("Not_A_Valid_Name"))
    done = work.push("bad, but not what the repository applies", check=False)
    assert done.returncode == 0, done.stderr
    assert f"remote: kapi: GitRepository {ns}/app is pinned to commit {pinned}" in done.stderr

    work.write("deploy/worse.yaml", _cm("Also_Not_Valid"))
    future = _commit(work, "the commit the repository will be pinned to")
    kapi_server.kubectl("patch", "gitrepository", "app", "-n", ns, "--type=merge",
                        "-p", json.dumps({"spec": {"ref": {"commit": future}}}))
    done = work.git("push", "origin", "HEAD:main", check=False)
    assert done.returncode != 0
    assert "Also_Not_Valid" in done.stderr and f"push to commit {future} rejected" in done.stderr
    _no_error_page(done)


def test_an_empty_tree_is_a_clear_refusal_and_a_clear_condition(kapi_server, tmp_path):
    """A commit deleting every file is refused with remote: lines naming the
    empty tree and the missing spec.path; with validateOnPush off it is pushed,
    and the Sync says BuildFailed with the same reason (nothing pruned)."""
    ns, work = _setup(kapi_server, tmp_path)
    work.write("deploy/keep.yaml", _cm("keep"))
    work.push("keep")
    wait_for(lambda: _exists(kapi_server, ns, "keep"), what="the first push to be applied")

    work.git("rm", "-rq", "deploy")
    empty = _commit(work, "delete every file")
    done = work.git("push", "origin", "HEAD:main", check=False)
    assert done.returncode != 0
    _no_error_page(done)
    assert f"remote: kapi: Sync {ns}/app: revision {empty[:12]} has no files (empty tree)" in done.stderr
    assert f"remote: kapi: Sync {ns}/app: path './deploy' does not exist in the revision" in done.stderr

    kapi_server.kubectl("patch", "gitrepository", "app", "-n", ns, "--type=merge",
                        "-p", '{"spec": {"validateOnPush": false}}')
    done = work.git("push", "origin", "HEAD:main", check=False)
    assert done.returncode == 0, done.stderr

    def failed():
        sync = _get(kapi_server, "sync", ns)
        if not (sync.get("status", {}).get("lastAttemptedRevision") or "").endswith(empty):
            return None
        return _ready(sync) if _ready(sync).get("status") == "False" else None

    ready = wait_for(failed, what="the Sync to report the empty revision")
    assert ready["reason"] == "BuildFailed", ready
    assert "path './deploy' does not exist in the revision" in ready["message"]
    assert _exists(kapi_server, ns, "keep")


def test_an_empty_first_commit_is_accepted_and_applies_nothing(kapi_server, tmp_path):
    """An empty tree for a Sync of the whole repository that applied nothing yet:
    accepted with a note, and the Sync is Ready at that revision."""
    ns, work = _setup(kapi_server, tmp_path, path="./")
    head = _commit(work, "nothing yet")
    done = work.git("push", "origin", "HEAD:main", check=False)
    assert done.returncode == 0, done.stderr
    assert f"remote: kapi: Sync {ns}/app: revision {head[:12]} has no files (empty tree)" in done.stderr

    def settled():
        sync = _get(kapi_server, "sync", ns)
        return sync if (sync.get("status", {}).get("lastAppliedRevision") or "").endswith(head) else None

    sync = wait_for(settled, what="the empty revision to be applied")
    assert _ready(sync)["status"] == "True", sync["status"]


def test_an_invalid_ignore_pattern_is_a_clear_refusal(kapi_server, tmp_path):
    """A spec.ignore line git would not accept refuses the push with the
    pattern named, instead of an internal error."""
    ns, work = _setup(kapi_server, tmp_path, ignore="*.md\n!\n")
    work.write("deploy/cm.yaml", _cm("cm"))
    done = work.push("with a broken spec.ignore", check=False)
    assert done.returncode != 0
    _no_error_page(done)
    assert f"remote: kapi: Sync {ns}/app: spec.ignore or a .sourceignore: Invalid git pattern: '!'" in done.stderr


def test_hostile_calls_to_the_pre_receive_endpoint_are_refused_cleanly(kapi_server, tmp_path):
    """Update lines git would never send (an option where a sha belongs, an
    unknown object), a NUL in the quarantine path: a JSON refusal, no 500, and
    nothing reaches git's command line."""
    ns, work = _setup(kapi_server, tmp_path)
    work.write("deploy/cm.yaml", _cm("cm"))
    work.push("one")
    path = f"/hooks/pre-receive/{ns}/app"
    target = tmp_path / "written-by-git"

    status, headers, answer = _post(kapi_server, path, {
        "updates": [f"{'0' * 40} --output={target} refs/heads/main"], "quarantine": ""}, kapi_server.token)
    assert status == 200 and headers["Content-Type"] == "application/json"
    assert answer["accepted"] is False and "not a ref update line" in answer["messages"][0]
    assert not target.exists()

    status, _, answer = _post(kapi_server, path, {
        "updates": [f"{'0' * 40} {'1' * 40} refs/heads/main"], "quarantine": ""}, kapi_server.token)
    assert status == 200 and answer["accepted"] is False
    assert answer["messages"] == [f"kapi: refs/heads/main must point to a commit ({'1' * 12} is not one)"]

    status, headers, answer = _post(kapi_server, path, {"updates": [], "quarantine": "a\u0000b"}, kapi_server.token)
    assert status == 400 and headers["Content-Type"] == "application/json" and "quarantine" in answer["message"]
