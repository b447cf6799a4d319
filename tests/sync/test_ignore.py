"""``spec.ignore`` of a GitRepository (gitignore syntax, from the repository
root, like Flux's): matching files are not rendered, so not validated, applied
or kept; ``!`` re-includes, ``dir/`` patterns take whole directories."""

from __future__ import annotations

import json

import pytest
from sync_gitops import Work, create, unique, wait_for

from sync.render import RenderError, render

API = "sync.kapi.dev/v1"
IGNORE = """\
# drafts and scratch space are not deployed
/deploy/skip.yaml
*.draft.yaml
scratch/
!/deploy/scratch/keep.yaml
"""


def _cm(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"v": name}}


def _files(root) -> dict[str, str]:
    files = {
        "deploy/a.yaml": json.dumps(_cm("a")),
        "deploy/skip.yaml": json.dumps(_cm("skip")),
        "deploy/nested/skip.yaml": json.dumps(_cm("nested-skip")),  # /-anchored: only the top one
        "deploy/b.draft.yaml": "not: [valid",  # ignored, so never parsed
        "deploy/scratch/c.yaml": json.dumps(_cm("scratch-c")),
        "deploy/scratch/deeper/d.yaml": json.dumps(_cm("scratch-d")),
        "deploy/scratch/keep.yaml": json.dumps(_cm("keep")),
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return files


def test_render_leaves_out_ignored_files(tmp_path):
    _files(tmp_path)
    names = sorted(o["metadata"]["name"] for o in render(tmp_path, "deploy", IGNORE))
    assert names == ["a", "keep", "nested-skip"]
    # Comments and blank lines alone ignore nothing: the draft is parsed and fails.
    with pytest.raises(RenderError) as failed:
        render(tmp_path, "deploy", "# nothing\n\n")
    assert failed.value.messages == [f for f in failed.value.messages if f.startswith("deploy/b.draft.yaml")]
    # "**" and a negation of a directory's file under an ignored directory pattern.
    names = sorted(o["metadata"]["name"] for o in render(tmp_path, "deploy", "**/*.yaml\n!**/deeper/*.yaml"))
    assert names == ["scratch-d"]


def _get(server, *args):
    done = server.kubectl("get", *args, "-o", "json", check=False)
    return json.loads(done.stdout) if done.returncode == 0 else None


def _names(server, ns: str) -> list[str]:
    items = (_get(server, "configmaps", "-n", ns, "-l", "sync.kapi.dev/name=app") or {}).get("items", [])
    return sorted(i["metadata"]["name"] for i in items)


def test_pushed_ignored_files_are_not_applied(kapi_server, tmp_path):
    """A real push with validate-on-push on: the ignored invalid draft does not
    reject it, ignored files are not applied, the negation is; changing
    spec.ignore re-renders the Syncs at once and prunes what it now ignores."""
    ns = unique("ignore")
    create(kapi_server,
           {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns},
            "spec": {"ignore": IGNORE}},
           {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
            "spec": {"sourceRef": {"name": "app"}, "path": "./deploy"}})
    work = Work(kapi_server, ns, "app", tmp_path / "work")
    _files(work.path)
    work.push("manifests with drafts and scratch files")
    head = work.git("rev-parse", "HEAD").stdout.strip()

    def applied():
        status = (_get(kapi_server, "sync", "app", "-n", ns) or {}).get("status") or {}
        return status.get("lastAppliedRevision", "").endswith(head) and status
    status = wait_for(applied, timeout=30, what="the push to be applied")
    assert _names(kapi_server, ns) == ["a", "keep", "nested-skip"]
    assert sorted(e["id"] for e in status["inventory"]["entries"]) == [
        f"{ns}_a__ConfigMap", f"{ns}_keep__ConfigMap", f"{ns}_nested-skip__ConfigMap"]

    kapi_server.kubectl("patch", "gitrepository", "app", "-n", ns, "--type=merge",
                        "-p", json.dumps({"spec": {"ignore": IGNORE + "skip.yaml\n"}}))
    wait_for(lambda: _names(kapi_server, ns) == ["a", "keep"], timeout=15,
             what="the unanchored skip.yaml pattern to prune nested-skip")


def test_kustomization_is_built_without_ignored_files(tmp_path):
    """kustomize sees the checkout as Flux's artifact would: without ignored files.
    A kustomization listing an ignored file fails to build; one reaching a kept
    file in a sibling directory (``../``) still builds."""
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "cm.yaml").write_text(json.dumps(_cm("base")))
    (tmp_path / "base" / "secret.draft.yaml").write_text(json.dumps(_cm("draft")))
    (tmp_path / "base" / "kustomization.yaml").write_text(
        json.dumps({"resources": ["cm.yaml"]})
    )
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "kustomization.yaml").write_text(
        json.dumps({"resources": ["../base", "extra.draft.yaml"], "namePrefix": "p-"})
    )
    (tmp_path / "app" / "extra.draft.yaml").write_text(json.dumps(_cm("extra")))

    names = sorted(o["metadata"]["name"] for o in render(tmp_path, "app"))
    assert names == ["p-base", "p-extra"]
    with pytest.raises(RenderError) as failed:
        render(tmp_path, "app", "*.draft.yaml")
    assert "extra.draft.yaml" in failed.value.messages[0]
    (tmp_path / "app" / "kustomization.yaml").write_text(
        json.dumps({"resources": ["../base"], "namePrefix": "p-"})
    )
    names = sorted(o["metadata"]["name"] for o in render(tmp_path, "app", "*.draft.yaml"))
    assert names == ["p-base"]
    # The checkout itself is untouched.
    assert (tmp_path / "app" / "extra.draft.yaml").exists()


def _write(root, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


SOURCEIGNORED = {
    # The root's file: unanchored patterns reach every directory.
    ".sourceignore": "# local scratch\n*.local.yaml\n",
    # deploy's file: relative to deploy/, and nothing outside it.
    "deploy/.sourceignore": "/old.yaml\ntmp/\n",
    "deploy/a.yaml": json.dumps(_cm("a")),
    "deploy/old.yaml": json.dumps(_cm("old")),
    "deploy/sub/old.yaml": json.dumps(_cm("sub-old")),  # /old.yaml is anchored to deploy/
    "deploy/tmp/t.yaml": json.dumps(_cm("tmp-t")),
    "deploy/x.local.yaml": "not: [valid",  # ignored by the root's file: never parsed
    "other/.sourceignore": "a.yaml\n",  # other/'s patterns do not reach deploy/a.yaml
    "other/a.yaml": json.dumps(_cm("other-a")),
    # Flux's default excludes: CI and tool configuration that is not a manifest.
    "deploy/cloudbuild.yaml": "steps: []\n",
    "deploy/.sops.yaml": "creation_rules: []\n",
}


def test_sourceignore_files_are_read_relative_to_their_directory(tmp_path):
    _write(tmp_path, SOURCEIGNORED)
    assert sorted(o["metadata"]["name"] for o in render(tmp_path, "deploy")) == ["a", "sub-old"]
    assert render(tmp_path, "other") == []
    assert sorted(o["metadata"]["name"] for o in render(tmp_path, "./")) == ["a", "sub-old"]
    # spec.ignore comes last, so its negation re-includes what a .sourceignore left out.
    names = sorted(o["metadata"]["name"] for o in render(tmp_path, "deploy", "!/deploy/old.yaml\n"))
    assert names == ["a", "old", "sub-old"]
    # A deeper .sourceignore overrides the root's for its own directory.
    (tmp_path / "deploy" / "tmp" / ".sourceignore").write_text("!t.yaml\n")
    (tmp_path / "deploy" / ".sourceignore").write_text("/old.yaml\n")
    names = sorted(o["metadata"]["name"] for o in render(tmp_path, "deploy"))
    assert names == ["a", "sub-old", "tmp-t"]


def test_kustomization_is_built_without_sourceignored_files(tmp_path):
    _write(tmp_path, {
        "app/.sourceignore": "extra.yaml\n",
        "app/cm.yaml": json.dumps(_cm("cm")),
        "app/extra.yaml": json.dumps(_cm("extra")),
        "app/kustomization.yaml": json.dumps({"resources": ["cm.yaml", "extra.yaml"]}),
    })
    with pytest.raises(RenderError) as failed:
        render(tmp_path, "app")
    assert "extra.yaml" in failed.value.messages[0]
    (tmp_path / "app" / "kustomization.yaml").write_text(json.dumps({"resources": ["cm.yaml"]}))
    assert [o["metadata"]["name"] for o in render(tmp_path, "app")] == ["cm"]


def test_pushed_sourceignore_is_honoured(kapi_server, tmp_path):
    """A push whose .sourceignore files leave out an invalid draft and an old
    manifest is accepted and applied without them; pushing a change to a
    .sourceignore alone prunes what it now ignores."""
    ns = unique("srcignore")
    create(kapi_server,
           {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns},
            "spec": {}},
           {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
            "spec": {"sourceRef": {"name": "app"}, "path": "./deploy"}})
    work = Work(kapi_server, ns, "app", tmp_path / "work")
    _write(work.path, {k: v for k, v in SOURCEIGNORED.items() if not k.startswith("other/")})
    work.push("manifests with .sourceignore files")
    wait_for(lambda: _names(kapi_server, ns) == ["a", "sub-old"], timeout=30,
             what="the push to be applied without the ignored files")

    (work.path / ".sourceignore").write_text("*.local.yaml\nsub/\n")
    work.push("ignore deploy/sub too")
    wait_for(lambda: _names(kapi_server, ns) == ["a"], timeout=30,
             what="the newly ignored sub/old.yaml to be pruned")
