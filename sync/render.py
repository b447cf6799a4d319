"""Rendering a Sync's path of a checkout into Kubernetes objects.

Every ``*.yaml``, ``*.yml`` and ``*.json`` file under the path, recursively, in
sorted order (multi-document YAML, ``kind: List`` expanded); a directory with a
``kustomization.yaml`` is built with ``kubectl kustomize`` instead, confined to
the checkout and boxed (``sync.kustomize``, ``sync.sandbox``). Nothing here
trusts the repository: paths that leave the checkout (``..``, symlinks), files
above ``MAX_FILE_BYTES``, YAML that does not parse and documents without
``apiVersion``/``kind``/``metadata.name`` are all reported as ``RenderError``
messages naming the file, never raised as anything else. Files matching the
GitRepository's ``spec.ignore`` or a ``.sourceignore`` file (gitignore syntax,
via ``pathspec``; Flux's defaults otherwise) are not rendered, and a
kustomization is built from a copy without them. Rendering
stops at the Sync's deadline (``sync.deadline``).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pathspec
import yaml

from sync import kustomize, sandbox
from sync.deadline import TimeoutExceeded
from sync.deadline import check as check_deadline

__all__ = ["MAX_FILE_BYTES", "RenderError", "ignore_spec", "render"]

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_OBJECTS = 20_000
_SUFFIXES = (".yaml", ".yml", ".json")
_KUSTOMIZATIONS = kustomize.KUSTOMIZATIONS
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class RenderError(Exception):
    """The path could not be rendered; ``messages`` lists every problem found."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("; ".join(messages))
        self.messages = messages


def _inside(root: Path, path: Path) -> bool:
    try:
        path.resolve().relative_to(root)
    except ValueError:
        return False
    return True


#: Flux source-controller's ``sourceignore`` defaults: version control files
#: always; CI files and tool configs only when nothing else is ignored.
IGNORE_FILE = ".sourceignore"
_EXCLUDE_VCS = (".git/", ".gitignore", ".gitmodules", ".gitattributes")
_EXCLUDE_DEFAULT = (
    ".github/", ".circleci/", ".travis.yml", ".gitlab-ci.yml", "appveyor.yml", ".drone.yml",
    "cloudbuild.yaml", "codeship-services.yml", "codeship-steps.yml",
    "**/.goreleaser.yml", "**/.goreleaser.brew.yml", "**/.sops.yaml", "**/.flux.yaml",
    "**/.golangci.yaml",
)


def _patterns(text: str, domain: tuple[str, ...] = ()) -> list[str]:
    """The gitignore lines of ``text`` as root-relative patterns: a line in
    ``dir/.sourceignore`` applies below ``dir`` only (go-git's pattern domain)."""
    out = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if domain:
            negated = line.startswith("!")
            body = line[1:] if negated else line
            prefix = "/".join(domain)
            if body.startswith("/"):
                body = f"/{prefix}{body}"
            elif "/" in body.rstrip("/"):
                body = f"/{prefix}/{body}"
            else:
                body = f"/{prefix}/**/{body}"
            line = ("!" if negated else "") + body
        out.append(line)
    return out


def _ignore_files(root: Path) -> list[str]:
    """The patterns of every ``.sourceignore`` in the checkout, parents first."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        if IGNORE_FILE in filenames:
            here = Path(dirpath)
            file = here / IGNORE_FILE
            if file.is_file() and not file.is_symlink():
                domain = here.relative_to(root).parts
                out += _patterns(file.read_text(errors="replace"), domain)
    return out


def ignore_spec(ignore: str | None, root: Path | None = None) -> tuple[pathspec.PathSpec, bool]:
    """What a checkout leaves out, as Flux's source-controller decides it: the
    ``.sourceignore`` files under ``root`` (each scoped to its directory) and
    ``spec.ignore`` (multi-line gitignore syntax from the repository root), over
    the version control files; with neither, Flux's default excludes (CI files,
    tool configs). gitignore rules: comments, ``/``-anchored and directory
    patterns, ``**``, and ``!`` negations, where the last matching pattern decides.
    Returns the spec and whether any user pattern is in it; a pattern git would
    not accept (``!`` alone, a trailing ``\\``) is a ``RenderError``."""
    user = (_ignore_files(root) if root is not None else []) + _patterns(ignore or "")
    lines = [*_EXCLUDE_VCS, *(user or _EXCLUDE_DEFAULT)]
    try:
        return pathspec.GitIgnoreSpec.from_lines(lines), bool(user)
    except ValueError as exc:  # GitIgnorePatternError
        raise RenderError([f"spec.ignore or a {IGNORE_FILE}: {exc}"]) from None


def render(
    checkout: Path, path: str, ignore: str | None = None, deadline: float | None = None
) -> list[dict[str, Any]]:
    """The objects of ``path`` (relative to the checkout root) in file order.
    Raises ``TimeoutExceeded`` (stage "rendering", in files) once ``time.time()``
    passes ``deadline``."""
    root = checkout.resolve()
    rel = (path or "./").strip()
    if os.path.isabs(rel):
        rel = rel.lstrip("/")
    base = root / rel
    if not _inside(root, base):
        raise RenderError([f"path {path!r} is outside the repository"])
    if not base.exists():
        raise RenderError([f"path {path!r} does not exist in the revision"])
    if base.is_file():
        files = [base]
    else:
        ignored, chosen = ignore_spec(ignore, root)
        for name in _KUSTOMIZATIONS:
            if (base / name).is_file():
                # Built from a copy only when the user left files out: the
                # defaults name nothing a kustomization would load.
                return _kustomize(root, base, ignored if chosen else None, deadline)
        files = []
        # A directory that cannot be read fails the render: never apply (and
        # prune against) part of a tree.
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False, onerror=_unreadable):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            for filename in sorted(filenames):
                file = Path(dirpath) / filename
                relname = file.relative_to(root).as_posix()
                if not filename.endswith(_SUFFIXES) or ignored.match_file(relname):
                    continue
                files.append(file)
    objects: list[dict[str, Any]] = []
    problems: list[str] = []
    for index, file in enumerate(files):
        check_deadline(deadline, "rendering", index, len(files), "files")
        # Walked files sit in real directories under the checked base (the walk
        # follows no directory symlink): only a file symlink can lead out, and
        # resolving every path costs more than parsing it.
        walked = file is not base
        relname = file.relative_to(root).as_posix() if walked or _inside(root, file.parent) else str(file)
        if (not walked or file.is_symlink()) and not _inside(root, file):
            problems.append(f"{relname}: symlink points outside the repository")
            continue
        size = file.stat().st_size
        if size > MAX_FILE_BYTES:
            problems.append(f"{relname}: file is {size} bytes, over the limit of {MAX_FILE_BYTES}")
            continue
        try:
            objects.extend(_documents(relname, file.read_bytes(), problems))
        except UnicodeDecodeError:
            problems.append(f"{relname}: not UTF-8 text")
        if len(objects) > MAX_OBJECTS:
            problems.append(f"more than {MAX_OBJECTS} objects under {path!r}")
            break
    if problems:
        raise RenderError(problems)
    return objects


def _unreadable(exc: OSError) -> None:
    raise RenderError([f"cannot read directory {Path(str(exc.filename)).name}: {exc.strerror}"])


def _documents(relname: str, data: bytes, problems: list[str]) -> list[dict[str, Any]]:
    try:
        if relname.endswith(".json"):
            docs = [json.loads(data)]
        else:
            docs = list(yaml.load_all(data.decode("utf-8"), Loader=_Loader))
    except (yaml.YAMLError, ValueError) as exc:
        problems.append(f"{relname}: cannot parse: {' '.join(str(exc).split())}")
        return []
    out = []
    for index, doc in enumerate(docs, start=1):
        where = f"{relname} (document {index})" if len(docs) > 1 else relname
        if doc is None:
            continue
        if not isinstance(doc, dict):
            problems.append(f"{where}: not an object")
            continue
        if str(doc.get("apiVersion", "")).startswith("kustomize.config.k8s.io/"):
            continue
        if doc.get("kind") == "List" and isinstance(doc.get("items"), list):
            out.extend(_checked(f"{where} item {i}", item, problems) for i, item in enumerate(doc["items"]))
            continue
        out.append(_checked(where, doc, problems))
    return [o for o in out if o is not None]


def _checked(where: str, doc: Any, problems: list[str]) -> dict | None:
    if not isinstance(doc, dict):
        problems.append(f"{where}: not an object")
        return None
    missing = [f for f in ("apiVersion", "kind") if not isinstance(doc.get(f), str) or not doc.get(f)]
    meta = doc.get("metadata")
    if not isinstance(meta, dict) or not meta.get("name"):
        missing.append("metadata.name")
    if missing:
        problems.append(f"{where}: missing {', '.join(missing)}")
        return None
    return doc


def _kustomize(
    root: Path,
    base: Path,
    ignored: pathspec.PathSpec | None = None,
    deadline: float | None = None,
) -> list[dict[str, Any]]:
    """``kubectl kustomize`` of ``base`` (``sync.kustomize.build``). With
    ``spec.ignore`` it builds a copy of the checkout without the ignored files,
    as Flux builds from an artifact that never contained them (a kustomization
    may reach files outside ``base``)."""
    if ignored is not None:
        with tempfile.TemporaryDirectory(prefix="kapi-kustomize-") as tmp:
            copy = Path(tmp) / "checkout"
            _copy_without_ignored(root, copy, ignored)
            return _kustomize(copy, copy / base.relative_to(root), None, deadline)
    rel = base.relative_to(root).as_posix() or "."
    check_deadline(deadline, "rendering", 0, 1, "files")
    try:
        problems, output = kustomize.build(root, base, deadline)
    except sandbox.SandboxTimeout as exc:
        if deadline is not None and time.time() >= deadline:
            raise TimeoutExceeded("rendering", 0, 1, "files") from None
        raise RenderError([f"kustomize build {rel}: {exc}"]) from None
    if problems:
        # kustomize's messages name the checkout's place on the server: keep it private.
        raise RenderError([p.replace(f"{root}/", "").replace(str(root), ".") for p in problems])
    bad: list[str] = []
    objects = _documents(f"kustomize build {rel}", output, bad)
    if bad:
        raise RenderError(bad)
    return objects


def _copy_without_ignored(root: Path, dest: Path, ignored: pathspec.PathSpec) -> None:
    """Copy the checkout to ``dest`` leaving out what ``ignored`` matches; symlinks
    stay symlinks (kustomize's own load restrictor then refuses those leaving it)."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        here = Path(dirpath)
        rel_dir = here.relative_to(root)
        # Files are matched one by one: a later ``!`` pattern may keep a file
        # inside an ignored directory, as the uncopied render does.
        dirnames[:] = [d for d in dirnames if d != ".git"]
        (dest / rel_dir).mkdir(parents=True, exist_ok=True)
        for filename in filenames:
            relname = (rel_dir / filename).as_posix()
            if ignored.match_file(relname):
                continue
            source = here / filename
            if source.is_symlink():
                os.symlink(os.readlink(source), dest / relname)
            else:
                shutil.copy2(source, dest / relname)
