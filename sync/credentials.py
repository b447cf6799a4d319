"""Credentials of a GitRepository's ``spec.secretRef`` as git's environment.

``git_auth_env`` is a context manager yielding the environment one git fetch
needs, and nothing outlives it:

* ``username``/``password`` (or ``token``, the password with any user name)
  for https: git asks ``GIT_ASKPASS``, a script without secrets that prints
  ``KAPI_GIT_USERNAME`` or ``KAPI_GIT_PASSWORD`` from the git process's own
  environment. The secret is never on disk nor on a command line (``ps``).
* ``identity`` (a private key) + ``known_hosts`` for ssh: both written to a
  private temporary directory (0700, files 0600) used by ``GIT_SSH_COMMAND``
  with ``StrictHostKeyChecking=yes``, removed as soon as the fetch ends. An
  ssh fetch without ``known_hosts`` fails: a host key is never trusted on
  first use.
* ``ca.crt`` (Flux's key; ``caFile`` too): the CA bundle an https server's
  certificate must chain to, in the same private directory (``GIT_SSL_CAINFO``).
"""

from __future__ import annotations

import os
import shlex
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

__all__ = ["GitCredentials", "git_auth_env"]

_ASKPASS = Path(__file__).resolve().parent / "askpass.sh"


@dataclass(frozen=True)
class GitCredentials:
    username: str = ""
    password: str = ""
    identity: str = ""
    known_hosts: str = ""
    ca: str = ""

    @classmethod
    def from_secret(cls, data: dict[str, str]) -> GitCredentials:
        """Flux's keys: ``username``/``password``, ``token``, ``identity``/``known_hosts``."""
        return cls(
            username=data.get("username", ""),
            password=data.get("password") or data.get("token", ""),
            identity=data.get("identity", ""),
            known_hosts=data.get("known_hosts", ""),
            ca=data.get("ca.crt") or data.get("caFile", ""),
        )

    def secrets(self) -> list[str]:
        """Values that must never appear in a message (for scrubbing git's output)."""
        return [s for s in (self.password, self.identity) if s]


@contextmanager
def git_auth_env(creds: GitCredentials | None) -> Iterator[dict[str, str]]:
    # Never ask a terminal, never use a credential helper of the machine.
    env = {"GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_SSH_COMMAND": "ssh -o BatchMode=yes -o StrictHostKeyChecking=yes"}
    if creds is None:
        yield env
        return
    if creds.password or creds.username:
        env.update({
            "GIT_ASKPASS": str(_ASKPASS),
            "KAPI_GIT_USERNAME": creds.username or "git",
            "KAPI_GIT_PASSWORD": creds.password,
        })
    if not (creds.identity or creds.ca):
        yield env
        return
    private = Path(tempfile.mkdtemp(prefix="kapi-git-"))  # 0700
    try:
        if creds.ca:
            env["GIT_SSL_CAINFO"] = str(_private_file(private / "ca.crt", creds.ca))
        if creds.identity:
            key = _private_file(private / "identity", creds.identity)
            hosts = _private_file(private / "known_hosts", creds.known_hosts)
            env["GIT_SSH_COMMAND"] = " ".join([
                "ssh", "-F", os.devnull, "-i", shlex.quote(str(key)), "-o", "IdentitiesOnly=yes",
                "-o", f"UserKnownHostsFile={shlex.quote(str(hosts))}", "-o", "GlobalKnownHostsFile=/dev/null",
                "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes",
            ])
        yield env
    finally:
        shutil.rmtree(private, ignore_errors=True)


def _private_file(path: Path, text: str) -> Path:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text if text.endswith("\n") else text + "\n")
    return path
