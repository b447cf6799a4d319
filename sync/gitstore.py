"""Git on disk: hosted bare repositories, mirrors of remote ones, checkouts.

Layout under the data directory::

    git/<namespace>/<name>.git          hosted repositories (served over HTTP)
    sync/mirrors/<namespace>/<name>.git local mirror of a remote repository
    sync/checkouts/<ns>/<name>/<sha>/   one read-only tree per revision, shared
                                        by every Sync of the repository

A checkout is written to a temporary directory and renamed into place, so a
reader sees a whole tree or none, and two workers racing to make the same one
both end with the same result. Mirrors fetch only what changed (``git fetch``).
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from kapi.runtime import config

__all__ = [
    "Commit",
    "GitError",
    "checkout",
    "ensure_hosted",
    "fetch_mirror",
    "hosted_path",
    "mirror_path",
    "resolve",
    "tree_id",
]

#: Checkouts kept per repository (older ones are removed).
KEEP_CHECKOUTS = 4
ZERO = "0" * 40


class GitError(Exception):
    """A git command failed; the message is git's own stderr, trimmed."""


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


def _git(*args: str, cwd: Path | None = None, timeout: float = 60, env: dict | None = None,
         input: bytes | None = None) -> bytes:
    full_env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", **(env or {})}
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, env=full_env, input=input, capture_output=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} timed out after {timeout:g}s") from None
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise GitError("; ".join(message[-3:]) or f"git {args[0]} failed")
    return done.stdout


_HOOK = """#!/bin/sh
# Validate-on-push: render and dry-run the new revision as each Sync would.
exec {python} {manage} sync pre-receive {namespace} {name}
"""


def ensure_hosted(namespace: str, name: str, branch: str = "main") -> Path:
    """The hosted bare repository, created on first use with its pre-receive hook."""
    path = hosted_path(namespace, name)
    if (path / "HEAD").exists():
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=path.parent))
    _git("init", "--quiet", "--bare", f"--initial-branch={branch}", str(tmp))
    _git("config", "http.receivepack", "true", cwd=tmp)
    _git("config", "receive.denyDeleteCurrent", "true", cwd=tmp)
    manage = Path(__file__).resolve().parents[1] / "manage.py"
    hook = tmp / "hooks" / "pre-receive"
    hook.write_text(_HOOK.format(python=sys.executable, manage=manage, namespace=namespace, name=name))
    hook.chmod(0o755)
    try:
        os.rename(tmp, path)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)  # created meanwhile by another process
    return path


def fetch_mirror(namespace: str, name: str, url: str, *, username: str = "", password: str = "",
                 identity: str = "", known_hosts: str = "", timeout: float = 60) -> Path:
    """Fetch every branch and tag of ``url`` into the local mirror (only what changed)."""
    path = mirror_path(namespace, name)
    if not (path / "HEAD").exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        _git("init", "--quiet", "--bare", str(path))
    args = ["-c", "credential.helper="]
    env: dict[str, str] = {}
    if username or password:
        token = base64.b64encode(f"{username or 'git'}:{password}".encode()).decode()
        args += ["-c", f"http.extraHeader=Authorization: Basic {token}"]
    keyfile = None
    if identity:
        keyfile = tempfile.NamedTemporaryFile("w", delete=False, prefix="kapi-ssh-")
        keyfile.write(identity if identity.endswith("\n") else identity + "\n")
        keyfile.close()
        os.chmod(keyfile.name, 0o600)
        hosts = tempfile.NamedTemporaryFile("w", delete=False, prefix="kapi-known-")
        hosts.write(known_hosts)
        hosts.close()
        env["GIT_SSH_COMMAND"] = (
            f"ssh -i {keyfile.name} -o IdentitiesOnly=yes -o UserKnownHostsFile={hosts.name} "
            "-o StrictHostKeyChecking=yes"
        )
    try:
        _git(*args, "fetch", "--quiet", "--prune", "--force", url,
             "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*",
             cwd=path, timeout=timeout, env=env)
    finally:
        if keyfile is not None:
            os.unlink(keyfile.name)
            os.unlink(env["GIT_SSH_COMMAND"].split("UserKnownHostsFile=")[1].split()[0])
    return path


def resolve(repo: Path, ref: dict | None) -> tuple[str, str]:
    """(sha, revision label) of ``ref`` ({branch|tag|commit}; default branch main)."""
    ref = ref or {}
    if ref.get("commit"):
        sha = _git("rev-parse", "--verify", "--quiet", f"{ref['commit']}^{{commit}}", cwd=repo).decode().strip()
        label = ref.get("branch") or "HEAD"
    elif ref.get("tag"):
        sha = _git("rev-parse", "--verify", "--quiet", f"refs/tags/{ref['tag']}^{{commit}}", cwd=repo).decode().strip()
        label = ref["tag"]
    else:
        branch = ref.get("branch") or "main"
        try:
            sha = _git("rev-parse", "--verify", "--quiet", f"refs/heads/{branch}", cwd=repo).decode().strip()
        except GitError:
            raise GitError(f"branch {branch!r} not found") from None
        label = branch
    return sha, f"{label}@sha1:{sha}"


def commit_info(repo: Path, sha: str) -> Commit:
    out = _git("log", "-1", "--format=%an <%ae>%x00%B", sha, cwd=repo).decode(errors="replace")
    author, _, message = out.partition("\x00")
    return Commit(sha, message.strip()[:1024], author.strip())


def tree_id(repo: Path, sha: str, path: str) -> str:
    """The tree id of ``path`` at ``sha`` ("" when absent): equal ids, equal trees."""
    rel = os.path.normpath(path or ".").lstrip("/")
    spec = f"{sha}^{{tree}}" if rel in (".", "") else f"{sha}:{rel}"
    try:
        return _git("rev-parse", "--verify", "--quiet", spec, cwd=repo).decode().strip()
    except GitError:
        return ""


def checkout(repo: Path, namespace: str, name: str, sha: str) -> Path:
    """A read-only tree of ``sha``, shared by all Syncs of the repository."""
    base = _root() / "sync" / "checkouts" / namespace / name
    final = base / sha
    if final.is_dir():
        return final
    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{sha[:12]}-", dir=base))
    try:
        archive = _git("archive", "--format=tar", sha, cwd=repo, timeout=120)
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True, capture_output=True)
        os.rename(tmp, final)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not final.is_dir():
            raise
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise GitError(f"cannot unpack {sha}: {exc.stderr.decode(errors='replace')}") from None
    _trim(base, keep=final)
    return final


def _trim(base: Path, keep: Path) -> None:
    olds = sorted(
        (p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".") and p != keep),
        key=lambda p: p.stat().st_mtime,
    )
    for old in olds[: max(0, len(olds) - (KEEP_CHECKOUTS - 1))]:
        shutil.rmtree(old, ignore_errors=True)
