"""The sync's git store (GitPython): one local clone per remote repository,
each fetch bringing only what changed, over a real smart-HTTP server."""

from __future__ import annotations

import os
import subprocess

import pytest
from sync_git_servers import BasicAuthGitServer

from sync import gitstore
from sync.credentials import GitCredentials

ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
       "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}


def _git(cwd, *args) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("KAPI_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def test_each_fetch_brings_only_what_changed(tmp_path, data_dir):
    work = tmp_path / "work"
    _git(tmp_path, "init", "-q", "--initial-branch=main", str(work))
    (work / "big.bin").write_bytes(os.urandom(512 * 1024))  # incompressible
    (work / "cm.yaml").write_text("v: 1\n")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "first")
    _git(tmp_path, "clone", "-q", "--bare", str(work), str(tmp_path / "served" / "app.git"))
    server = BasicAuthGitServer(tmp_path / "served", [(None, "tok")])
    try:
        creds = GitCredentials(password="tok")
        url = f"{server.url}/app.git"
        mirror = gitstore.fetch_mirror("ns", "app", url, creds)
        assert gitstore.resolve(mirror, None)[0] == _git(work, "rev-parse", "HEAD").strip()
        assert server.pack_bytes[-1] > 512 * 1024

        (work / "cm.yaml").write_text("v: 2\n")
        _git(work, "commit", "-qam", "second")
        _git(work, "push", "-q", str(tmp_path / "served" / "app.git"), "main")
        again = gitstore.fetch_mirror("ns", "app", url, creds)
        assert again == mirror  # the same local clone
        sha, revision = gitstore.resolve(mirror, {"branch": "main"})
        assert revision == f"main@sha1:{_git(work, 'rev-parse', 'HEAD').strip()}"
        assert server.pack_bytes[-1] < 4096  # one commit, one tree, one blob
        assert gitstore.commit_info(mirror, sha).message == "second"

        # Nothing new: only the ref listing (protocol v2 ls-refs), no pack.
        count = len(server.pack_bytes)
        gitstore.fetch_mirror("ns", "app", url, creds)
        assert len(server.pack_bytes) == count + 1 and server.pack_bytes[-1] < 200
    finally:
        server.close()


def test_checkout_is_shared_and_tree_ids_compare_paths(tmp_path, data_dir):
    work = tmp_path / "work"
    _git(tmp_path, "init", "-q", "--initial-branch=main", str(work))
    (work / "a").mkdir()
    (work / "a" / "x.yaml").write_text("x: 1\n")
    (work / "b.yaml").write_text("b: 1\n")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "first")
    first = _git(work, "rev-parse", "HEAD").strip()
    (work / "b.yaml").write_text("b: 2\n")
    _git(work, "commit", "-qam", "second")
    second = _git(work, "rev-parse", "HEAD").strip()
    mirror = gitstore.fetch_mirror("ns", "app", f"file://{work}")
    # A commit elsewhere leaves the tree of a/ unchanged (monorepos).
    assert gitstore.tree_id(mirror, first, "a") == gitstore.tree_id(mirror, second, "./a/")
    assert gitstore.tree_id(mirror, first, ".") != gitstore.tree_id(mirror, second, ".")
    assert gitstore.tree_id(mirror, second, "missing") == ""
    with gitstore.checked_out(mirror, "ns", "app", second) as tree:
        assert (tree / "b.yaml").read_text() == "b: 2\n"
        with gitstore.checked_out(mirror, "ns", "app", second) as again:
            assert again == tree
    with pytest.raises(gitstore.GitError, match="tag 'nope' not found"):
        gitstore.resolve(mirror, {"tag": "nope"})


def test_a_checkout_in_use_is_never_trimmed(tmp_path, data_dir):
    """Only KEEP_CHECKOUTS trees are kept, least recently used first out, but
    one that a render still reads stays whole until it is done, however many
    newer revisions are checked out meanwhile; reusing a tree makes it the newest."""
    work = tmp_path / "work"
    _git(tmp_path, "init", "-q", "--initial-branch=main", str(work))
    shas = []
    for i in range(gitstore.KEEP_CHECKOUTS + 3):
        (work / "cm.yaml").write_text(f"n: {i}\n")
        _git(work, "add", "-A")
        _git(work, "commit", "-q", "-m", f"c{i}")
        shas.append(_git(work, "rev-parse", "HEAD").strip())
    mirror = gitstore.fetch_mirror("ns", "trim", f"file://{work}")
    base = data_dir / "sync" / "checkouts" / "ns" / "trim"
    with gitstore.checked_out(mirror, "ns", "trim", shas[0]) as held:
        for sha in shas[1:]:
            with gitstore.checked_out(mirror, "ns", "trim", sha):
                pass
            assert (held / "cm.yaml").read_text() == "n: 0\n"
        kept = {p.name for p in base.iterdir() if not p.name.startswith(".")}
        assert shas[0] in kept and len(kept) <= gitstore.KEEP_CHECKOUTS + 1
    # Released, the oldest goes at the next trim.
    kept = {p.name for p in base.iterdir() if not p.name.startswith(".")}
    assert shas[0] not in kept and len(kept) == gitstore.KEEP_CHECKOUTS
    with gitstore.checked_out(mirror, "ns", "trim", shas[1]):
        pass
    for sha in shas[2:]:
        with gitstore.checked_out(mirror, "ns", "trim", sha):
            pass
    kept = {p.name for p in base.iterdir() if not p.name.startswith(".")}
    assert kept == set(shas[-gitstore.KEEP_CHECKOUTS:])
