"""Rendering a checkout: bad input ends as RenderError messages, never a crash."""

from __future__ import annotations

import pytest

from sync import render as render_module
from sync.render import RenderError, render


def _write(root, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_renders_recursively_in_order_with_multi_documents_and_lists(tmp_path):
    """Every yaml/yml/json file under the path in sorted walk order; Lists expanded; others skipped."""
    _write(tmp_path, "d/b.yml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n---\n"
                                "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    _write(tmp_path, "d/a/x.json", '{"apiVersion":"v1","kind":"List","items":['
                                   '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}]}')
    _write(tmp_path, "d/README.md", "not yaml: [")
    names = [o["metadata"]["name"] for o in render(tmp_path, "./d")]
    assert names == ["b", "c", "a"]  # a directory's files, then its subdirectories


@pytest.mark.parametrize("path", ["../", "d/../../x", "/../../etc"])
def test_paths_outside_the_checkout_are_refused(tmp_path, path):
    """``..`` out of the checkout is an error naming the path."""
    (tmp_path / "d").mkdir()
    with pytest.raises(RenderError, match="outside the repository"):
        render(tmp_path / "d", path)


def test_symlinks_out_of_the_checkout_are_refused(tmp_path):
    """A symlinked file or directory pointing out of the checkout is reported."""
    root = tmp_path / "repo"
    (root / "d").mkdir(parents=True)
    (tmp_path / "secret.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: s}\n")
    (root / "d" / "link.yaml").symlink_to(tmp_path / "secret.yaml")
    (root / "out").symlink_to(tmp_path)
    with pytest.raises(RenderError) as caught:
        render(root, "d")
    assert caught.value.messages == ["d/link.yaml: symlink points outside the repository"]
    with pytest.raises(RenderError, match="outside the repository"):
        render(root, "out")


def test_bad_documents_are_all_reported(tmp_path, monkeypatch):
    """Unparsable YAML, missing apiVersion/kind/name, non-objects and huge files
    are each reported with their file name, all in one error."""
    monkeypatch.setattr(render_module, "MAX_FILE_BYTES", 100)
    _write(tmp_path, "broken.yaml", "a: [unclosed\n")
    _write(tmp_path, "nokind.yaml", "apiVersion: v1\nmetadata: {name: x}\n")
    _write(tmp_path, "scalar.yaml", "just a string\n")
    _write(tmp_path, "huge.yaml", "# " + "x" * 200 + "\n")
    with pytest.raises(RenderError) as caught:
        render(tmp_path, "./")
    text = "\n".join(caught.value.messages)
    assert "broken.yaml: cannot parse" in text
    assert "nokind.yaml: missing kind" in text
    assert "scalar.yaml: not an object" in text
    assert "huge.yaml: file is 203 bytes, over the limit of 100" in text


def test_missing_path(tmp_path):
    with pytest.raises(RenderError, match="does not exist"):
        render(tmp_path, "nope")
