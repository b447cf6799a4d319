"""``spec.ignore`` of a GitRepository (gitignore syntax, from the repository
root, like Flux's): matching files are not rendered, so not validated, applied
or kept; ``!`` re-includes, ``dir/`` patterns take whole directories."""

from __future__ import annotations

import json

import pytest
from sync_gitops import Work, create, sync_namespace, unique, wait_for

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
           *sync_namespace(ns),
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


def test_sourceignore_files_are_read_as_flux_reads_them(tmp_path):
    """``.sourceignore`` files at the root and in subdirectories (each pattern
    scoped to its file's directory) add to ``spec.ignore``."""
    files = {
        ".sourceignore": "# root file\n*.draft.yaml\n",
        "deploy/a.yaml": json.dumps(_cm("a")),
        "deploy/b.draft.yaml": "not: [valid",
        "deploy/team/.sourceignore": "local.yaml\n/only-here.yaml\n",
        "deploy/team/local.yaml": json.dumps(_cm("team-local")),
        "deploy/team/deeper/local.yaml": json.dumps(_cm("team-deeper-local")),
        "deploy/team/only-here.yaml": json.dumps(_cm("team-only-here")),
        "deploy/team/deeper/only-here.yaml": json.dumps(_cm("deeper-only-here")),
        "deploy/other/local.yaml": json.dumps(_cm("other-local")),
        "deploy/spec-ignored.yaml": json.dumps(_cm("spec-ignored")),
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    names = sorted(o["metadata"]["name"] for o in render(tmp_path, "./deploy", "/deploy/spec-ignored.yaml"))
    # team's `local.yaml` matches at any depth below team/, not in other/;
    # its `/only-here.yaml` only directly in team/.
    assert names == ["a", "deeper-only-here", "other-local"]


def test_flux_default_excludes_apply_when_nothing_is_ignored(tmp_path):
    """With no ignore rules, CI files (cloudbuild.yaml, .gitlab-ci.yml, ...) are
    left out as Flux leaves them out; any user rule replaces those defaults."""
    (tmp_path / "cloudbuild.yaml").write_text("steps: []\n")
    (tmp_path / ".gitlab-ci.yml").write_text("stages: [build]\n")
    (tmp_path / "app.yaml").write_text(json.dumps(_cm("app")))
    assert [o["metadata"]["name"] for o in render(tmp_path, "./")] == ["app"]
    with pytest.raises(RenderError) as caught:
        render(tmp_path, "./", "nothing-matches-this.yaml")
    assert any("cloudbuild.yaml" in m for m in caught.value.messages)


def test_pushed_sourceignore_is_honoured_and_a_change_to_it_alone_prunes(kapi_server, tmp_path):
    """A push whose .sourceignore files leave out a draft and an old manifest is
    applied without them; a later commit changing only the root's .sourceignore
    (outside the Sync's path) re-renders and prunes what it now ignores."""
    ns = unique("srcignore")
    create(kapi_server,
           *sync_namespace(ns),
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns},
            "spec": {}},
           {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
            "spec": {"sourceRef": {"name": "app"}, "path": "./deploy"}})
    work = Work(kapi_server, ns, "app", tmp_path / "work")
    files = {
        ".sourceignore": "*.local.yaml\n",
        "deploy/.sourceignore": "/old.yaml\n",
        "deploy/a.yaml": json.dumps(_cm("a")),
        "deploy/old.yaml": json.dumps(_cm("old")),
        "deploy/sub/old.yaml": json.dumps(_cm("sub-old")),
        "deploy/x.local.yaml": "not: [valid",
    }
    for rel, text in files.items():
        (work.path / rel).parent.mkdir(parents=True, exist_ok=True)
        (work.path / rel).write_text(text)
    work.push("manifests with .sourceignore files")
    wait_for(lambda: _names(kapi_server, ns) == ["a", "sub-old"], timeout=30,
             what="the push to be applied without the ignored files")

    (work.path / ".sourceignore").write_text("*.local.yaml\nsub/\n")
    work.push("ignore deploy/sub too")
    wait_for(lambda: _names(kapi_server, ns) == ["a"], timeout=30,
             what="the newly ignored sub/old.yaml to be pruned")
