"""Django-user tokens are verified and resolved once per process and cached;
revocation must stay prompt all the same. Against the session server (two API
processes): deactivating, regrouping and deleting a Django user take effect on
every request within a fraction of a second, whichever process answers."""

from __future__ import annotations

import os
import subprocess
import sys

import requests
from auth.conftest import eventually
from kapi_testserver import ROOT, KapiServer


def _shell(server: KapiServer, code: str) -> None:
    env = {**os.environ, "KAPI_DATA_DIR": str(server.data_dir)}
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "shell", "-c", code],
        check=True,
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=120,
    )


def _user_code(name: str, action: str) -> str:
    return (
        "from django.contrib.auth.models import Group, User;"
        f"u = User.objects.get(username={name!r});"
        f"g, _ = Group.objects.get_or_create(name={name + '-team'!r});" + action
    )


def _codes(server: KapiServer, token: str, path: str, n: int = 6) -> set[int]:
    """Status codes of ``n`` requests on fresh connections (both API processes)."""
    out = set()
    for _ in range(n):
        with requests.Session() as s:
            s.trust_env = False
            out.add(
                s.get(
                    server.url + path,
                    headers={"Authorization": f"Bearer {token}"},
                    verify=str(server.ca_path),
                    timeout=30,
                ).status_code
            )
    return out


def test_user_changes_reach_cached_identities(
    kapi_server: KapiServer, make_user, ns
) -> None:
    user = make_user("cached")
    team = f"{user.name}-team"
    path = f"/api/v1/namespaces/{ns}/configmaps"
    kapi_server.kubectl(
        "create",
        "rolebinding",
        "team-view",
        "-n",
        ns,
        "--clusterrole=view",
        f"--group={team}",
    )
    # Warm every process's caches: authenticated, but not in the group yet.
    assert _codes(kapi_server, user.token, path) == {403}

    _shell(kapi_server, _user_code(user.name, "u.groups.add(g)"))
    eventually(lambda: _codes(kapi_server, user.token, path) == {200})

    _shell(kapi_server, _user_code(user.name, "u.groups.remove(g)"))
    eventually(lambda: _codes(kapi_server, user.token, path) == {403})

    _shell(
        kapi_server,
        _user_code(user.name, "u.groups.add(g); u.is_active = False; u.save()"),
    )
    eventually(lambda: _codes(kapi_server, user.token, path) == {401})

    _shell(kapi_server, _user_code(user.name, "u.is_active = True; u.save()"))
    eventually(lambda: _codes(kapi_server, user.token, path) == {200})

    # Renaming the group away from the binding's subject takes the access away.
    _shell(kapi_server, _user_code(user.name, f"g.name = {team + '-old'!r}; g.save()"))
    eventually(lambda: _codes(kapi_server, user.token, path) == {403})

    _shell(kapi_server, _user_code(user.name, "u.delete()"))
    eventually(lambda: _codes(kapi_server, user.token, path) == {401})
    # A new user of the same name does not inherit the old token (new id).
    _shell(
        kapi_server,
        f"from django.contrib.auth.models import User; User.objects.create(username={user.name!r})",
    )
    assert _codes(kapi_server, user.token, path) == {401}
