"""Rotating and retiring the token signing key on a running server, as the
README documents it: ``manage.py rotate_signing_key`` adds a key in the data
directory that signs from then on while older tokens keep working;
``--retire`` removes the older keys and every token they signed stops working,
in every API process, without a restart, and the watches they authorised end.
Its own server: retiring keys would end the tokens of every other test."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator

import pytest
import requests
from kapi_testserver import (
    ROOT,
    KapiServer,
    serving,
)

from tests.auth.test_watch_revocation import (
    _grant_role,
    _ready,
    _service_account_token,
    revoked_run,
)


@pytest.fixture(scope="module")
def server() -> Iterator[KapiServer]:
    yield from serving()


def _token(server: KapiServer) -> str:
    return server.kubectl("create", "token", "robot", "-n", "default").stdout.strip()


def _kid(token: str) -> str:
    header = token.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))["kid"]


def _rotate(server: KapiServer, *extra: str) -> str:
    out = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "rotate_signing_key",
         "--data-dir", str(server.data_dir), *extra],
        capture_output=True, text=True, check=True, cwd=ROOT,
    ).stdout
    return out.split()[-1]


def _answers(server: KapiServer, token: str, times: int = 6) -> list[int]:
    """Status codes of GET /api with ``token``, each on a new connection so that
    both API processes answer some."""
    return [
        requests.get(
            f"{server.url}/api",
            headers={"Authorization": f"Bearer {token}", "Connection": "close"},
            verify=str(server.ca_path),
            timeout=30,
        ).status_code
        for _ in range(times)
    ]


def test_rotate_then_retire_the_signing_key(server: KapiServer) -> None:
    keys = server.data_dir / "signing-keys"
    server.kubectl("create", "serviceaccount", "robot", "-n", "default")
    first = _token(server)
    assert _answers(server, first) == [200] * 6
    assert len(list(keys.glob("key-*.pem"))) == 1

    new_kid = _rotate(server)
    assert len(list(keys.glob("key-*.pem"))) == 2
    second = _token(server)
    assert _kid(second) == new_kid != _kid(first)
    # Both verify: the old key still does.
    assert _answers(server, first) == [200] * 6
    assert _answers(server, second) == [200] * 6

    newest_kid = _rotate(server, "--retire")
    assert len(list(keys.glob("key-*.pem"))) == 1
    for old in (first, second):
        assert _answers(server, old) == [401] * 6
    refused = requests.get(
        f"{server.url}/api", headers={"Authorization": f"Bearer {first}"},
        verify=str(server.ca_path), timeout=30,
    ).json()
    assert (refused["kind"], refused["reason"], refused["code"]) == ("Status", "Unauthorized", 401)
    third = _token(server)
    assert _kid(third) == newest_kid
    assert _answers(server, third) == [200] * 6


def test_signing_key_retired_ends_watches(server: KapiServer) -> None:
    """Retiring ends the watches of the tokens the retired keys signed: a
    watch as a ServiceAccount ends before it delivers anything newer, on
    every API process (tests/auth/test_watch_revocation.py's way)."""
    ns = f"keys-{uuid.uuid4().hex[:6]}"
    server.kubectl("create", "namespace", ns)
    token = _service_account_token(server, ns, "watcher")
    _grant_role(server, ns, f"--serviceaccount={ns}:watcher")
    _ready(server, token, ns)

    def retire() -> None:
        env = {**os.environ, "KAPI_DATA_DIR": str(server.data_dir)}
        subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "rotate_signing_key", "--retire"],
            check=True,
            cwd=ROOT,
            env=env,
            capture_output=True,
            timeout=120,
        )

    revoked_run(server, token, ns, retire)
