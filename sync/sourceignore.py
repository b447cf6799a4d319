"""What a checkout's artifact leaves out, as Flux's source-controller decides it.

Three layers of gitignore patterns, a later one overriding an earlier one (the
last matching pattern decides, as in git and Flux's ``sourceignore`` package):

1. the default excludes (VCS files, CI configuration, images and archives,
   ``.sops.yaml``/``.flux.yaml``), which Flux always applies;
2. every ``.sourceignore`` file in the checkout, the root's first then each
   subdirectory's (depth first, sorted), its patterns relative to its own
   directory: ``/x`` in ``deploy/.sourceignore`` means ``deploy/x`` and the file
   ignores nothing outside ``deploy/``;
3. the GitRepository's ``spec.ignore``, relative to the repository root.
"""

from __future__ import annotations

import os
from pathlib import Path

import pathspec

__all__ = ["DEFAULT_EXCLUDES", "IGNORE_FILE", "IgnoreRules"]

IGNORE_FILE = ".sourceignore"
DEFAULT_EXCLUDES = (
    # VCS
    ".git/", ".gitignore", ".gitmodules", ".gitattributes",
    # binary extensions
    "*.jpg", "*.jpeg", "*.gif", "*.png", "*.wmv", "*.flv", "*.tar.gz", "*.zip",
    # CI configuration
    ".github/", ".circleci/", ".travis.yml", ".gitlab-ci.yml", "appveyor.yml", ".drone.yml",
    "cloudbuild.yaml", "codeship-services.yml", "codeship-steps.yml",
    # tool configuration that is not a manifest
    "**/.goreleaser.yml", "**/.sops.yaml", "**/.flux.yaml",
)


def _patterns(text: str) -> list[str]:
    # As Flux's ReadPatterns: a line starting with '#' or blank is no pattern.
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


class IgnoreRules:
    """The ignore decision for files of one checkout (paths relative to its root)."""

    def __init__(self, layers: list[tuple[str, pathspec.GitIgnoreSpec]]) -> None:
        self._layers = layers  # (directory prefix ending in "/" or "", spec), lowest priority first

    @classmethod
    def load(cls, root: Path, ignore: str | None = None) -> IgnoreRules:
        layers = [("", pathspec.GitIgnoreSpec.from_lines(DEFAULT_EXCLUDES))]
        for prefix, text in _ignore_files(root):
            lines = _patterns(text)
            if lines:
                layers.append((prefix, pathspec.GitIgnoreSpec.from_lines(lines)))
        lines = _patterns(ignore or "")
        if lines:
            layers.append(("", pathspec.GitIgnoreSpec.from_lines(lines)))
        return cls(layers)

    def ignored(self, relname: str) -> bool:
        """Whether the file ``relname`` (posix, from the root) is left out."""
        for prefix, spec in reversed(self._layers):
            if prefix and not relname.startswith(prefix):
                continue
            include = spec.check_file(relname[len(prefix):]).include
            if include is not None:
                return include
        return False


def _ignore_files(root: Path) -> list[tuple[str, str]]:
    """``(directory prefix, text)`` of every ``.sourceignore`` in Flux's order:
    a directory's own file, then its subdirectories' in name order, recursively
    (``.git`` excepted; directory symlinks are not followed)."""
    found: list[tuple[str, str]] = []

    def visit(directory: Path, prefix: str) -> None:
        file = directory / IGNORE_FILE
        if file.is_file() and not file.is_symlink():
            found.append((prefix, file.read_text(encoding="utf-8", errors="replace")))
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if entry.name != ".git" and entry.is_dir(follow_symlinks=False):
                visit(Path(entry.path), f"{prefix}{entry.name}/")

    visit(root, "")
    return found
