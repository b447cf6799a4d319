"""GitOps under RBAC: a Sync acts as its ServiceAccount, and the git endpoint
needs get (clone) and update (push) on the GitRepository."""

from __future__ import annotations

import json
import subprocess

from sync_gitops import Work, create, unique, wait_for
from user_kubeconfigs import new_user

API = "sync.kapi.dev/v1"


def _ready_condition(server, ns: str, name: str, head: str) -> dict | None:
    done = server.kubectl("get", "sync", name, "-n", ns, "-o", "json", check=False)
    if done.returncode:
        return None
    status = json.loads(done.stdout).get("status") or {}
    if not status.get("lastAttemptedRevision", "").endswith(head):
        return None
    return next((c for c in status.get("conditions") or [] if c["type"] == "Ready"), None)


def test_sync_is_confined_to_what_its_service_account_may_do(kapi_server, tmp_path):
    """A ServiceAccount allowed ConfigMaps in its own namespace only: a revision
    that also touches another namespace fails with the 403 message, and nothing
    of it is applied; without the foreign object it applies."""
    ns, other = unique("confined"), unique("elsewhere")
    rbac = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "deployer", "namespace": ns}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": {"name": "configmaps", "namespace": ns},
         "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["*"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": "deployer", "namespace": ns},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "configmaps"},
         "subjects": [{"kind": "ServiceAccount", "name": "deployer", "namespace": ns}]},
    ]
    create(kapi_server, *rbac)
    create(
        kapi_server,
        {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns}, "spec": {}},
        {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
         "spec": {"sourceRef": {"kind": "GitRepository", "name": "app"}, "path": "./",
                  "serviceAccountName": "deployer"}},
    )
    work = Work(kapi_server, ns, "app", tmp_path / "work")
    work.write("mine.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "mine", "namespace": ns},
                             "data": {"a": "1"}})
    work.write("theirs.yaml", {"apiVersion": "v1", "kind": "ConfigMap",
                               "metadata": {"name": "theirs", "namespace": other}, "data": {"b": "2"}})
    refused = work.push("both", check=False)
    # The push-time validation runs with the Sync's rights: the pusher learns it now.
    assert refused.returncode != 0
    assert f'configmaps "theirs" is forbidden: User "system:serviceaccount:{ns}:deployer"' in refused.stderr
    kapi_server.kubectl("patch", "gitrepository", "app", "-n", ns, "--type=merge",
                        "-p", '{"spec":{"validateOnPush":false}}')
    work.push("both, unvalidated")
    head = work.git("rev-parse", "HEAD").stdout.strip()
    ready = wait_for(lambda: _ready_condition(kapi_server, ns, "app", head), what="the Sync to fail")
    assert ready["status"] == "False"
    assert ready["reason"] == "ReconciliationFailed"
    assert (
        f'configmaps "theirs" is forbidden: User "system:serviceaccount:{ns}:deployer" '
        f'cannot patch resource "configmaps" in API group "" in the namespace "{other}"'
    ) in ready["message"]
    assert kapi_server.kubectl("get", "cm", "mine", "-n", ns, check=False).returncode != 0

    work.remove("theirs.yaml")
    work.push("only mine")
    head = work.git("rev-parse", "HEAD").stdout.strip()
    ready = wait_for(lambda: _ready_condition(kapi_server, ns, "app", head), what="the Sync to apply")
    assert ready["status"] == "True", ready
    assert kapi_server.kubectl("get", "cm", "mine", "-n", ns, "-o", "jsonpath={.data.a}").stdout == "1"


def test_git_endpoint_needs_get_to_clone_and_update_to_push(kapi_server, tmp_path):
    ns = unique("gitrbac")
    create(
        kapi_server,
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "repo", "namespace": ns}, "spec": {}},
    )
    stranger, stranger_token = new_user(kapi_server, "stranger")
    reader, reader_token = new_user(kapi_server, "reader")
    kapi_server.kubectl("create", "role", "git-reader", "--verb=get", "--resource=gitrepositories.sync.kapi.dev", "-n", ns)
    kapi_server.kubectl("create", "rolebinding", "reader", "--role=git-reader", f"--user={reader}", "-n", ns)
    host = kapi_server.url.removeprefix("https://")
    env = {"GIT_SSL_CAINFO": str(kapi_server.ca_path), "GIT_TERMINAL_PROMPT": "0",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com", "PATH": __import__("os").environ["PATH"]}

    def git(*args, cwd=tmp_path):
        return subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)

    denied = git("clone", "-q", f"https://u:{stranger_token}@{host}/git/{ns}/repo.git", "stranger")
    assert denied.returncode != 0
    assert "403" in denied.stderr
    cloned = wait_for(
        lambda: git("clone", "-q", f"https://u:{reader_token}@{host}/git/{ns}/repo.git", "reader").returncode == 0
        or None,
        what="the reader binding to take effect",
    )
    assert cloned
    work = tmp_path / "reader"
    (work / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "try", cwd=work)
    pushed = git("push", "origin", "HEAD:main", cwd=work)
    assert pushed.returncode != 0
    assert "403" in pushed.stderr
