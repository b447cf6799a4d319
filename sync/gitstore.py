"""Git on disk: hosted bare repositories, mirrors of remote ones, checkouts.

Layout under the data directory::

    git/<namespace>/<name>.git          hosted repositories (served over HTTP)
    sync/mirrors/<namespace>/<name>.git local mirror of a remote repository
    sync/checkouts/<ns>/<name>/<sha>/   one read-only tree per revision, shared
                                        by every Sync of the repository

Everything goes through GitPython (``git.Repo``): a remote repository has one
local clone (bare, its ``origin`` mirroring every branch and tag), shared by
all the Syncs that use it; each fetch transfers only what changed. A checkout
is written to a temporary directory and renamed into place, so a reader sees a
whole tree or none, and two workers racing to make the same one both end with
the same result.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import git

from kapi.runtime import config
from sync.credentials import GitCredentials, git_auth_env

__all__ = [
    "Commit",
    "GitError",
    "checked_out",
    "ensure_hosted",
    "fetch_mirror",
    "hosted_path",
    "is_ancestor",
    "ls_tree",
    "mirror_path",
    "peel",
    "quarantine_env",
    "resolve",
    "tree_id",
]

#: Checkouts kept per repository (older ones are removed).
KEEP_CHECKOUTS = 4
#: A half-made or half-removed checkout older than this was left by a killed worker.
_ABANDONED = 3600.0
ZERO = "0" * 40
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


class GitError(Exception):
    """A git command failed; the message is git's own stderr, trimmed."""


class RefNotFound(GitError):
    """The branch, tag or commit a GitRepository follows is not in the repository
    (for a hosted repository: nothing has been pushed to it yet)."""


@dataclass(frozen=True)
class Commit:
    sha: str
    message: str
    author: str


def _root() -> Path:
    return config.data_dir()


def hosted_root() -> Path:
    return _root() / "git"


def hosted_path(namespace: str, name: str) -> Path:
    return hosted_root() / namespace / f"{name}.git"


def mirror_path(namespace: str, name: str) -> Path:
    return _root() / "sync" / "mirrors" / namespace / f"{name}.git"


#: git's generic advice lines, which say nothing about the failure.
_ADVICE = ("Please make sure you have the correct access rights", "and the repository exists.")


def _message(exc: git.GitCommandError, secrets: Sequence[str] = (),
             progress: git.RemoteProgress | None = None) -> str:
    """git's own stderr (GitPython quotes it; a fetch's ``progress`` keeps the lines
    that are not ``fatal:``/``error:``, such as ssh's), its last lines, secrets blanked."""
    raw = str(exc.stderr or "").strip().removeprefix("stderr:").strip()
    if raw.startswith("'") and raw.endswith("'"):
        raw = raw[1:-1]
    lines = (progress.other_lines if progress else []) + raw.splitlines()
    lines = [line.strip() for line in lines if line.strip() and not line.strip().startswith(_ADVICE)]
    text = "; ".join(lines[-3:]) or f"git {exc.command[1] if len(exc.command) > 1 else ''} failed"
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


@contextmanager
def _open(path: Path, env: dict[str, str] | None = None) -> Iterator[git.Repo]:
    """The repository at ``path``; git commands run with ``env`` added (e.g. the
    pre-receive quarantine). GitPython's helper processes end with the block."""
    try:
        repo = git.Repo(path)
    except (git.NoSuchPathError, git.InvalidGitRepositoryError) as exc:
        raise GitError(f"no git repository at {path.name}: {exc.__class__.__name__}") from None
    try:
        with repo.git.custom_environment(**(env or {})):
            yield repo
    except git.GitCommandError as exc:
        raise GitError(_message(exc)) from None
    finally:
        repo.close()


_HOOK = """#!/bin/sh
# {purpose}
exec {python} -I -S {hook} {namespace} {name}
"""
#: Hook name → (module beside this one, what it does). proc-receive runs only
#: for pushes with ``-o wait`` (``receive.procReceiveRefs``, set per push).
_HOOKS = {
    "pre-receive": ("prereceive_hook.py", "Validate-on-push: the API server renders and dry-runs the new "
                    "revision as\n# each Sync would (sync/prereceive_hook.py asks it; no Django boots here)."),
    "proc-receive": ("pushwait_hook.py", "git push -o wait: update the ref, then report the Syncs' outcome\n"
                     "# (sync/pushwait_hook.py asks the API server)."),
}


def _hook_text(hook: str, namespace: str, name: str) -> str:
    module, purpose = _HOOKS[hook]
    path = Path(__file__).resolve().parent / module
    return _HOOK.format(purpose=purpose, python=sys.executable, hook=path, namespace=namespace, name=name)


def _install_hooks(repo_dir: Path, namespace: str, name: str) -> None:
    """Write the hooks unless they are already these (repositories made by an
    older kapi get the current hooks on their next use)."""
    for hook_name in _HOOKS:
        hook = repo_dir / "hooks" / hook_name
        text = _hook_text(hook_name, namespace, name)
        try:
            if hook.read_text() == text:
                continue
        except OSError:
            pass
        hook.parent.mkdir(exist_ok=True)
        tmp = hook.with_name(f".{hook_name}-{os.getpid()}")
        tmp.write_text(text)
        tmp.chmod(0o755)
        os.replace(tmp, hook)


def ensure_hosted(namespace: str, name: str, branch: str = "main") -> Path:
    """The hosted bare repository, created on first use with its hooks."""
    path = hosted_path(namespace, name)
    if (path / "HEAD").exists():
        _install_hooks(path, namespace, name)
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=path.parent))
    repo = git.Repo.init(tmp, bare=True, initial_branch=branch)
    with repo.config_writer() as cfg:
        cfg.set_value("http", "receivepack", "true")
        cfg.set_value("receive", "denyDeleteCurrent", "true")
    repo.close()
    _install_hooks(tmp, namespace, name)
    try:
        os.rename(tmp, path)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)  # created meanwhile by another process
    return path


def quarantine_env(repo_dir: Path, quarantine: str) -> dict[str, str] | None:
    """git's environment to read a push still in quarantine (objects that
    pre-receive sees but the repository does not have yet), or None when
    ``quarantine`` is not this repository's own quarantine directory."""
    objects = (repo_dir / "objects").resolve()
    if not quarantine:
        return {}
    try:
        path = Path(quarantine).resolve()
    except (OSError, ValueError):  # a NUL byte, a loop: not a quarantine
        return None
    if path.parent != objects or "incoming-" not in path.name or not path.is_dir():
        return None
    return {"GIT_OBJECT_DIRECTORY": str(path), "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(objects)}


#: The local clone mirrors the remote's branches and tags under the same names.
_MIRROR_REFSPECS = ("+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")


def _mirror(path: Path, url: str) -> git.Repo:
    """The local clone of ``url``, created on first use; ``origin`` follows spec.url."""
    if (path / "HEAD").exists():
        repo = git.Repo(path)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        repo = git.Repo.init(path, bare=True)
    if "origin" not in [r.name for r in repo.remotes]:
        repo.create_remote("origin", url)
    with repo.config_writer() as cfg:
        section = 'remote "origin"'
        if cfg.get_value(section, "url", "") != url:
            cfg.set_value(section, "url", url)
        values = cfg.get_values(section, "fetch", [])
        if tuple(values) != _MIRROR_REFSPECS:
            cfg.remove_option(section, "fetch")
            for spec in _MIRROR_REFSPECS:
                cfg.add_value(section, "fetch", spec)
    return repo


def fetch_mirror(namespace: str, name: str, url: str, credentials: GitCredentials | None = None,
                 timeout: float = 60) -> Path:
    """Fetch every branch and tag of ``url`` into the repository's local clone:
    git's negotiation transfers only the objects it does not have yet."""
    path = mirror_path(namespace, name)
    repo = _mirror(path, url)
    progress = git.RemoteProgress()
    try:
        with git_auth_env(credentials) as env, repo.git.custom_environment(**env):
            repo.remote("origin").fetch(progress=progress, prune=True, force=True, kill_after_timeout=timeout)
    except git.GitCommandError as exc:
        if exc.status == -9 or "Timeout" in str(exc.stderr):
            raise GitError(f"git fetch timed out after {timeout:g}s") from None
        raise GitError(_message(exc, credentials.secrets() if credentials else [], progress)) from None
    finally:
        repo.close()
    return path


def _rev(repo: git.Repo, spec: str) -> str | None:
    try:
        return repo.git.rev_parse("--verify", "--quiet", spec)
    except git.GitCommandError:
        return None


def peel(path: Path, rev: str, env: dict[str, str] | None = None) -> str | None:
    """The commit ``rev`` names (annotated tags peeled), None when it names no
    commit; ``env`` as for ``checkout`` (a push's quarantine)."""
    try:
        with _open(path, env) as repo:
            return _rev(repo, f"{rev}^{{commit}}")
    except GitError:
        return None


def is_ancestor(path: Path, ancestor: str, tip: str, env: dict[str, str] | None = None) -> bool:
    """Whether commit ``ancestor`` is reachable from ``tip`` (or is it)."""
    try:
        with _open(path, env) as repo:
            repo.git.merge_base("--is-ancestor", ancestor, tip)
    except GitError:
        return False
    return True


def resolve(path: Path, ref: dict | None) -> tuple[str, str]:
    """(sha, revision label) of ``ref`` ({branch|tag|commit}; default branch main)."""
    ref = ref or {}
    with _open(path) as repo:
        if ref.get("commit"):
            sha = _rev(repo, f"{ref['commit']}^{{commit}}")
            label = ref.get("branch") or "HEAD"
            what = f"commit {ref['commit']!r}"
        elif ref.get("tag"):
            sha = _rev(repo, f"refs/tags/{ref['tag']}^{{commit}}")
            label = ref["tag"]
            what = f"tag {ref['tag']!r}"
        else:
            label = ref.get("branch") or "main"
            sha = _rev(repo, f"refs/heads/{label}")
            what = f"branch {label!r}"
    if not sha:
        raise RefNotFound(f"{what} not found")
    return sha, f"{label}@sha1:{sha}"


def commit_info(path: Path, sha: str) -> Commit:
    with _open(path) as repo:
        commit = repo.commit(sha)
        author = f"{commit.author.name} <{commit.author.email}>"
        message = commit.message if isinstance(commit.message, str) else commit.message.decode(errors="replace")
    return Commit(sha, message.strip()[:1024], author.strip())


def tree_id(path: Path, sha: str, subpath: str) -> str:
    """The tree id of ``subpath`` at ``sha`` ("" when absent): equal ids, equal trees."""
    rel = os.path.normpath(subpath or ".").lstrip("/")
    spec = f"{sha}^{{tree}}" if rel in (".", "") else f"{sha}:{rel}"
    with _open(path) as repo:
        return _rev(repo, spec) or ""


def _checkout_base(namespace: str, name: str) -> Path:
    return _root() / "sync" / "checkouts" / namespace / name


def _hold(tree: Path, exclusive: bool, wait: bool) -> int | None:
    """An open descriptor of directory ``tree`` holding an ``flock`` on it
    (shared while a render reads the tree, exclusive to remove it; it holds
    across processes and dies with a killed holder), or None when ``tree`` is
    gone or, ``wait`` off, the lock is taken."""
    try:
        fd = os.open(tree, os.O_RDONLY | os.O_DIRECTORY)
    except FileNotFoundError:
        return None
    try:
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        fcntl.flock(fd, mode if wait else mode | fcntl.LOCK_NB)
        # Removed (and perhaps made again) between open and lock: not this one.
        if os.fstat(fd).st_ino != os.stat(tree).st_ino:
            raise FileNotFoundError(tree)
    except (BlockingIOError, FileNotFoundError):
        os.close(fd)
        return None
    return fd


@contextmanager
def checked_out(path: Path, namespace: str, name: str, sha: str,
                env: dict[str, str] | None = None) -> Iterator[Path]:
    """A read-only tree of ``sha``, shared by all Syncs of the repository
    (``env``: extra git environment, e.g. a push's quarantine). It stays in
    place until the block ends: older checkouts are removed only when nobody
    reads them, so a slow render never loses its tree mid-walk."""
    if not _SHA.fullmatch(sha):
        # Never let a caller's string reach git's command line as an option.
        raise GitError(f"{sha[:80]!r} is not a commit id")
    base = _checkout_base(namespace, name)
    base.mkdir(parents=True, exist_ok=True)
    for _ in range(10):
        tree = _materialize(path, base, sha, env)
        fd = _hold(tree, exclusive=False, wait=True)
        if fd is not None:
            break
    else:
        raise GitError(f"checkout of {sha} keeps being removed")
    try:
        os.utime(tree)  # in use: the newest, not the next to go
        yield tree
    finally:
        os.close(fd)
    _trim(base)


def _materialize(path: Path, base: Path, sha: str, env: dict[str, str] | None) -> Path:
    final = base / sha
    if final.is_dir():
        return final
    tmp = Path(tempfile.mkdtemp(prefix=f".{sha[:12]}-", dir=base))
    try:
        with tempfile.TemporaryFile(dir=base) as archive:
            with _open(path, env) as repo:
                # A commit that deletes every file has an empty tree, whose
                # archive is a bare end-of-archive block tarfile cannot open:
                # its checkout is an empty directory (the render says what is missing).
                empty = not repo.git.ls_tree(sha)
                if not empty:
                    _check_size(repo, sha)
                    repo.archive(archive, sha, format="tar")
            if not empty:
                archive.seek(0)
                with tarfile.open(fileobj=archive) as tar:
                    tar.extractall(tmp, filter="tar")
        os.rename(tmp, final)
    except (OSError, tarfile.TarError) as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if not final.is_dir():
            raise GitError(f"cannot unpack {sha}: {exc}") from None
    except GitError:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


def _checkout_limits() -> tuple[int, int]:
    from django.conf import settings

    if not settings.configured:
        return 1 << 30, 100_000
    return (int(getattr(settings, "SYNC_MAX_CHECKOUT_BYTES", 1 << 30)),
            int(getattr(settings, "SYNC_MAX_CHECKOUT_FILES", 100_000)))


def _check_size(repo: git.Repo, sha: str) -> None:
    """Refuse a revision whose tree is larger than the checkout limits
    (``KAPI_SYNC_MAX_CHECKOUT_BYTES``/``_FILES``), measured from git's object
    headers before anything is written: git stores one blob for many identical
    files, so a push of a few KiB could otherwise unpack to fill the disk."""
    max_bytes, max_files = _checkout_limits()
    files = size = 0
    for entry in repo.git.ls_tree("-r", "-l", "-z", sha).split("\0"):
        meta = entry.partition("\t")[0].split()
        if len(meta) == 4:
            files += 1
            size += int(meta[3]) if meta[3].isdigit() else 0
    if files > max_files:
        raise GitError(f"revision {sha[:12]} has {files} files, over the limit of {max_files} "
                       "(KAPI_SYNC_MAX_CHECKOUT_FILES)")
    if size > max_bytes:
        raise GitError(f"revision {sha[:12]} is {size} bytes unpacked, over the limit of {max_bytes} "
                       "(KAPI_SYNC_MAX_CHECKOUT_BYTES)")


def _trim(base: Path) -> None:
    """Keep the ``KEEP_CHECKOUTS`` most recently used checkouts; never remove
    one that a render holds."""
    olds = []
    for tree in base.iterdir():
        try:
            if not tree.is_dir():
                continue
            if not tree.name.startswith("."):
                olds.append((tree.stat().st_mtime, tree))
            elif time.time() - tree.stat().st_mtime > _ABANDONED:
                shutil.rmtree(tree, ignore_errors=True)  # left by a killed worker
        except FileNotFoundError:
            continue  # removed meanwhile by another process
    olds.sort()
    for _, old in olds[: max(0, len(olds) - KEEP_CHECKOUTS)]:
        fd = _hold(old, exclusive=True, wait=False)
        if fd is None:
            continue
        try:
            # Renamed away first: a reader that opens the path from now on
            # finds nothing and makes it anew instead of reading a half-removed tree.
            doomed = base / f".gone-{old.name}-{os.getpid()}"
            os.rename(old, doomed)
            shutil.rmtree(doomed, ignore_errors=True)
        except OSError:
            pass
        finally:
            os.close(fd)


def ls_tree(path: Path, sha: str, subpath: str) -> list[tuple[str, str]]:
    """(mode, path relative to ``subpath``) of every file under ``subpath`` at ``sha``."""
    rel = os.path.normpath(subpath or ".").lstrip("/")
    spec = f"{sha}^{{tree}}" if rel in (".", "") else f"{sha}:{rel}"
    with _open(path) as repo:
        try:
            text = repo.git.ls_tree("-r", "-z", spec)
        except git.GitCommandError:
            return []
    out = []
    for record in text.split("\0"):
        head, _, name = record.partition("\t")
        if name:
            out.append((head.split(" ", 1)[0], name))
    return out
