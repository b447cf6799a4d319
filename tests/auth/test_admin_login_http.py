"""Admin sign-in throttling over real HTTP against the running server (two API
processes sharing the counts in PostgreSQL), through Django's CSRF flow."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid

import requests
from kapi_testserver import ROOT, KapiServer


def _make_staff(server: KapiServer, username: str, password: str) -> None:
    code = (
        "from django.contrib.auth import get_user_model;"
        f"get_user_model().objects.create_user({username!r}, password={password!r},"
        " is_staff=True)"
    )
    env = {**os.environ, "KAPI_DATA_DIR": str(server.data_dir)}
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "shell", "-c", code],
        check=True,
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=120,
    )


def _sign_in(server: KapiServer, username: str, password: str) -> requests.Response:
    """A fresh browser-like session (new connection): GET the form, POST it."""
    session = requests.Session()
    session.trust_env = False
    session.verify = str(server.ca_path)
    page = session.get(f"{server.url}/admin/login/?next=/admin/", timeout=30)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    response = session.post(
        f"{server.url}/admin/login/?next=/admin/",
        data={
            "csrfmiddlewaretoken": token,
            "username": username,
            "password": password,
            "next": "/admin/",
        },
        headers={"Referer": f"{server.url}/admin/login/"},
        allow_redirects=False,
        timeout=30,
    )
    response.signed_in = "sessionid" in session.cookies  # type: ignore[attr-defined]
    return response


def test_failed_sign_ins_lock_the_account(kapi_server: KapiServer) -> None:
    name = f"ops-{uuid.uuid4().hex[:6]}"
    _make_staff(kapi_server, name, "correct horse")
    ok = _sign_in(kapi_server, name, "correct horse")
    assert ok.status_code == 302 and ok.signed_in
    for _ in range(5):
        failed = _sign_in(kapi_server, name, "battery staple")
        assert failed.status_code == 200 and not failed.signed_in
        assert "Please enter the correct username and password" in failed.text
    locked = _sign_in(kapi_server, name, "correct horse")
    assert locked.status_code == 429 and not locked.signed_in
    assert "Too many failed sign-in attempts" in locked.text
    assert int(locked.headers["Retry-After"]) > 0
