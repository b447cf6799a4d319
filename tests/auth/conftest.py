"""Fixtures for authentication/authorization tests: per-user kubeconfigs made
with ``manage.py kubeconfig --user`` against the session server."""

from __future__ import annotations

import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from kapi_testserver import KapiServer, kubectl_binary
from user_kubeconfigs import user_kubeconfig


class User:
    """One user's kubeconfig and a kubectl bound to it."""

    def __init__(self, server: KapiServer, name: str, kubeconfig: Path) -> None:
        self.server = server
        self.name = name
        self.kubeconfig = kubeconfig
        self.token = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["token"]

    def kubectl(self, *args: str, input: str | None = None, check: bool = False):
        return subprocess.run(
            [kubectl_binary(), "--kubeconfig", str(self.kubeconfig), *args],
            input=input,
            capture_output=True,
            text=True,
            check=check,
            timeout=60,
        )

    def can_i(self, *args: str) -> bool:
        result = self.kubectl("auth", "can-i", *args)
        assert result.stdout.strip() in ("yes", "no"), (result.stdout, result.stderr)
        return result.stdout.strip() == "yes"


def eventually(check: Callable[[], bool], timeout: float = 5.0) -> None:
    """RBAC changes reach every API process within a fraction of a second."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.1)


@pytest.fixture(scope="session")
def make_user(kapi_server: KapiServer) -> Callable[[str], User]:
    made: dict[str, User] = {}

    def make(prefix: str) -> User:
        name = f"{prefix}-{uuid.uuid4().hex[:6]}"
        out = user_kubeconfig(kapi_server, name)
        path = (
            kapi_server.data_dir.parent / f"{kapi_server.data_dir.name}-kc-{name}.yaml"
        )
        path.write_text(out)
        made[name] = User(kapi_server, name, path)
        return made[name]

    return make


@pytest.fixture
def ns(kapi_server: KapiServer) -> Iterator[str]:
    name = f"rbac-{uuid.uuid4().hex[:8]}"
    kapi_server.kubectl("create", "namespace", name)
    yield name
    kapi_server.kubectl("delete", "namespace", name, "--wait=false", check=False)


@pytest.fixture(scope="session")
def api_anon(kapi_server: KapiServer):
    import requests

    session = requests.Session()
    session.trust_env = False
    session.verify = str(kapi_server.ca_path)

    def get(path: str, **kwargs):
        return session.get(kapi_server.url + path, timeout=30, **kwargs)

    return get
