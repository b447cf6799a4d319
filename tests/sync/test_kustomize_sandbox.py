"""A kustomization builds from its own checkout only (``sync.kustomize``, real
``kubectl kustomize``): remote bases and resources, ``file://``, ``../`` escapes,
absolute paths, symlinks out, escapes hidden in patches, generators and
components, and Helm charts are all refused before kustomize runs, each with a
message naming the kustomization file and the reference. The build itself runs
boxed (``sync.sandbox``): no credentials or proxies of the server, a time,
memory and output limit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from sync import kustomize, sandbox
from sync.render import RenderError, render

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"k": "v"}}


def _write(root: Path, rel: str, doc) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))


@pytest.fixture
def tree(tmp_path):
    """A checkout under ``repo/`` next to a tenant's secret manifests outside it."""
    root = tmp_path / "repo"
    _write(root, "base/cm.yaml", CM)
    _write(root, "base/kustomization.yaml", {"resources": ["cm.yaml"]})
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "other-tenant"},
              "stringData": {"password": "hunter2"}}
    _write(tmp_path, "other/sha/deploy/secret.yaml", secret)
    _write(tmp_path, "other/sha/deploy/kustomization.yaml", {"resources": ["secret.yaml"]})
    _write(tmp_path, "server.env", "PASSWORD=hunter2\n")
    return root


def _refused(root: Path, kustomization: dict, *needles: str) -> str:
    _write(root, "app/kustomization.yaml", kustomization)
    with pytest.raises(RenderError) as caught:
        render(root, "app")
    text = "\n".join(caught.value.messages)
    for needle in needles:
        assert needle in text, text
    assert "hunter2" not in text
    return text


def test_a_local_overlay_builds(tree):
    """The ordinary case still works: an overlay over ``../base`` in the same repository."""
    _write(tree, "app/kustomization.yaml", {"resources": ["../base"], "namePrefix": "p-"})
    assert [o["metadata"]["name"] for o in render(tree, "app")] == ["p-cm"]


@pytest.mark.parametrize("ref", [
    "https://github.com/kubernetes-sigs/kustomize//examples/helloWorld?ref=v1.0.6",
    "github.com/kubernetes-sigs/kustomize/examples/helloWorld",
    "git::https://example.com/repo.git//deploy",
    "ssh://git@example.com/repo.git",
    "git@github.com:owner/repo.git",
    "https://127.0.0.1:6443/api/v1/namespaces/default/secrets",
])
def test_remote_bases_and_resources_are_refused(tree, ref):
    _refused(tree, {"resources": [ref]}, "app/kustomization.yaml: resources",
             "remote bases and resources are not allowed", "KAPI_SYNC_KUSTOMIZE_REMOTE")


def test_file_urls_are_refused(tree):
    other = tree.parent / "other" / "sha" / "deploy"
    _refused(tree, {"resources": [f"file://{other}"]}, "file:// references are not allowed")


@pytest.mark.parametrize("field,kustomization", [
    ("resources", {"resources": ["../../other/sha/deploy"]}),
    ("bases", {"bases": ["../../other/sha/deploy"]}),
    ("components", {"components": ["../../other/sha/deploy"]}),
    ("patchesStrategicMerge", {"resources": ["../base"], "patchesStrategicMerge": ["../../other/sha/deploy/secret.yaml"]}),
    ("patches.path", {"resources": ["../base"], "patches": [{"path": "../../other/sha/deploy/secret.yaml"}]}),
    ("patchesJson6902.path", {"resources": ["../base"], "patchesJson6902": [
        {"target": {"kind": "ConfigMap", "name": "cm"}, "path": "../../../../../../../etc/passwd"}]}),
    ("configMapGenerator.files", {"configMapGenerator": [{"name": "x", "files": ["k=../../server.env"]}]}),
    ("secretGenerator.envs", {"secretGenerator": [{"name": "x", "envs": ["../../server.env"]}]}),
    ("openapi.path", {"resources": ["../base"], "openapi": {"path": "../../server.env"}}),
    ("transformers", {"resources": ["../base"], "transformers": ["../../other/sha/deploy"]}),
])
def test_paths_out_of_the_repository_are_refused(tree, field, kustomization):
    _refused(tree, kustomization, f"app/kustomization.yaml: {field}", "path leaves the repository")


def test_absolute_paths_are_refused(tree):
    target = tree.parent / "other" / "sha" / "deploy"
    _refused(tree, {"resources": [str(target)]}, "absolute paths are not allowed")


def test_symlinks_out_of_the_repository_are_refused(tree):
    (tree / "app").mkdir()
    (tree / "app" / "link").symlink_to(tree.parent / "other" / "sha" / "deploy")
    _refused(tree, {"resources": ["link"]}, "resources 'link': path leaves the repository")


def test_escapes_are_found_in_nested_kustomizations(tree):
    """A base inside the repository whose own kustomization escapes is refused too."""
    _write(tree, "nested/kustomization.yaml", {"resources": ["../../other/sha/deploy"]})
    _refused(tree, {"resources": ["../nested"]}, "nested/kustomization.yaml: resources", "leaves the repository")


def test_missing_references_are_refused(tree):
    """kustomize tries a missing local path as a remote target: refused first."""
    _refused(tree, {"resources": ["nope/deploy"]}, "resources 'nope/deploy': not found in the repository")


def test_helm_charts_are_refused(tree):
    _refused(tree, {"helmCharts": [{"name": "x", "repo": "https://charts.example.com"}]},
             "helmCharts: Helm charts are not supported")


def test_remote_bases_are_allowed_when_the_administrator_says_so(tree):
    _write(tree, "app/kustomization.yaml", {"resources": ["https://example.com/x.yaml", "../base"]})
    assert kustomize.precheck(tree, tree / "app", allow_remote=True) == []
    assert kustomize.precheck(tree, tree / "app", allow_remote=False)


def test_a_missed_remote_reference_still_cannot_fetch(tree, tmp_path):
    """Were the pre-check to miss one, the boxed kustomize has no network way out:
    its proxies point at a closed port, it has no git, no HOME, no credentials."""
    _write(tree, "app/kustomization.yaml", {"resources": ["https://example.com/x.yaml"]})
    kubectl = os.path.realpath(__import__("shutil").which("kubectl"))
    done = sandbox.run([kubectl, "kustomize", str(tree / "app")], cwd=tree)
    assert done.returncode != 0
    assert b"127.0.0.1:9" in done.stderr or b"proxy" in done.stderr.lower()
    env = sandbox.scrubbed_env(tmp_path)
    assert not any("TOKEN" in k or "KAPI" in k or "SSH_AUTH" in k for k in env)
    assert env["HTTPS_PROXY"] == sandbox.DEAD_PROXY


def test_memory_time_and_output_limits(tree):
    """Past its memory, time or output limit, a build ends with a message saying which."""
    kubectl = os.path.realpath(__import__("shutil").which("kubectl"))
    argv = [kubectl, "kustomize", str(tree / "base")]
    assert sandbox.run(argv, cwd=tree).returncode == 0
    with pytest.raises(sandbox.SandboxError, match="output is over the limit of 10 bytes"):
        sandbox.run(argv, cwd=tree, box=sandbox.Limits(output=10))
    with pytest.raises(sandbox.SandboxError, match="out of memory"):
        sandbox.run(argv, cwd=tree, box=sandbox.Limits(memory=256 << 20))
    with pytest.raises(sandbox.SandboxTimeout, match="time limit"):
        sandbox.run(["/bin/sleep", "30"], cwd=tree, box=sandbox.Limits(timeout=0.5))


def test_builds_wait_for_a_slot_and_give_up_at_their_time(tree):
    """With every slot taken, a build waits, and past its own time it ends with
    a message saying so (the API process never runs builds unbounded)."""
    import threading

    held = threading.Thread(target=sandbox.run, args=(["/bin/sleep", "5"], tree),
                            kwargs={"box": sandbox.Limits(concurrency=1, timeout=10)})
    held.start()
    try:
        slot = sandbox._slot(1)
        while slot._value:  # until the sleeper holds the only slot
            threading.Event().wait(0.01)
        with pytest.raises(sandbox.SandboxTimeout, match=r"no render slot free .*\(1 builds at once\)"):
            sandbox.run(["/bin/true"], cwd=tree, box=sandbox.Limits(concurrency=1, timeout=0.3))
    finally:
        held.join()
    assert sandbox.run(["/bin/true"], cwd=tree, box=sandbox.Limits(concurrency=1)).returncode == 0
