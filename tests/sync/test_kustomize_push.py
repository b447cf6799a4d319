"""The kustomize escapes through a real server, real git and real ``kubectl
kustomize``: a push whose kustomization reads files of the server (``../``
out of the checkout, absolute paths, a symlink), another tenant's checkout, or
a remote base is refused, each reference named in a ``remote:`` line; and a
Sync that meets one (validation off) ends Ready=False naming it, having
applied nothing."""

from __future__ import annotations

import json

from sync_gitops import Work, create, sync_namespace, unique, wait_for

API = "sync.kapi.dev/v1"
CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "mine"}}
UP = "../" * 12


def _setup(server, tmp_path, validate: bool = True) -> tuple[str, Work]:
    ns = unique("kesc")
    create(server,
           *sync_namespace(ns),
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns},
            "spec": {"validateOnPush": validate}},
           {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
            "spec": {"sourceRef": {"name": "app"}, "path": "./deploy", "retryInterval": "1h"}})
    work = Work(server, ns, "app", tmp_path / "work")
    work.write("deploy/cm.yaml", CM)
    return ns, work


def test_a_push_whose_kustomization_leaves_the_repository_is_refused(kapi_server, tmp_path):
    ns, work = _setup(kapi_server, tmp_path)
    other = kapi_server.data_dir / "git"
    work.write("deploy/kustomization.yaml", {
        "resources": ["cm.yaml", f"{UP}etc", str(other), "https://github.com/example/repo//deploy?ref=main",
                      "link"],
        "configMapGenerator": [{"name": "loot", "files": [f"passwd={UP}etc/passwd"]}],
    })
    (work.path / "deploy" / "link").symlink_to(kapi_server.data_dir)
    done = work.push("escapes", check=False)
    assert done.returncode != 0
    lines = [line for line in done.stderr.splitlines() if line.startswith("remote: kapi:")]
    text = "\n".join(lines)
    where = f"remote: kapi: Sync {ns}/app: deploy/kustomization.yaml:"
    assert f"{where} resources '{UP}etc': path leaves the repository" in text, done.stderr
    assert f"{where} resources '{other}': absolute paths are not allowed" in text
    assert (f"{where} resources 'https://github.com/example/repo//deploy?ref=main': remote bases and "
            "resources are not allowed") in text
    assert f"{where} resources 'link': path leaves the repository" in text
    assert f"{where} configMapGenerator.files '{UP}etc/passwd': path leaves the repository" in text
    assert "root:" not in done.stderr  # nothing of /etc/passwd came back
    assert str(kapi_server.data_dir) not in text.replace(str(other), "")


def test_a_sync_meeting_an_escape_applies_nothing(kapi_server, tmp_path):
    ns, work = _setup(kapi_server, tmp_path, validate=False)
    work.write("deploy/kustomization.yaml", {"resources": ["cm.yaml", f"{UP}etc"]})
    work.push("an escape, validation off")
    head = work.git("rev-parse", "HEAD").stdout.strip()

    def failed():
        sync = json.loads(kapi_server.kubectl("get", "sync", "app", "-n", ns, "-o", "json").stdout)
        status = sync.get("status") or {}
        if not status.get("lastAttemptedRevision", "").endswith(head):
            return None
        ready = next((c for c in status.get("conditions") or [] if c["type"] == "Ready"), {})
        return ready if ready.get("status") == "False" else None

    ready = wait_for(failed, timeout=60, what="the Sync to refuse the build")
    assert ready["reason"] == "BuildFailed", ready
    assert f"deploy/kustomization.yaml: resources '{UP}etc': path leaves the repository" in ready["message"]
    assert kapi_server.kubectl("get", "configmap", "mine", "-n", ns, check=False).returncode != 0
