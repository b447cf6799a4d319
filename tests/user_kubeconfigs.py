"""Users' kubeconfigs for a running test server: what ``manage.py kubeconfig
--data-dir DIR --user NAME`` prints (the user is created if absent, with a
signed token), from one long-lived process per data directory instead of one
process per user. Each ``manage.py`` start is a Django start, about 2 s of CPU
under the suite's load, and the suite makes dozens of users.

:func:`user_kubeconfig` is the tests' entry point. The process it starts
(:func:`serve`) reads user names, one per line, and answers each with one JSON line:
``{"kubeconfig": text}`` or ``{"error": text}``. Its database connection is
closed after every answer, so a server's PostgreSQL can stop while it waits.
``tests/runtime/test_serve.py`` runs the command itself, as a user would.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import yaml

__all__ = ["forget", "new_user", "serve", "user_kubeconfig", "user_token"]

ROOT = Path(__file__).resolve().parent.parent

_makers: dict[str, subprocess.Popen] = {}
_lock = threading.Lock()


def _start(data_dir: str) -> subprocess.Popen:
    return subprocess.Popen(
        # Not run as a script: that would put tests/ first on sys.path, where
        # tests/selectors shadows the standard library's module.
        [sys.executable, "-c", "import sys; from tests.user_kubeconfigs import serve; serve(sys.argv[1])",
         data_dir],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True, cwd=ROOT, env=dict(os.environ),
    )


def _ask(maker: subprocess.Popen, name: str) -> dict | None:
    try:
        maker.stdin.write(name + "\n")
        maker.stdin.flush()
        line = maker.stdout.readline()
    except (BrokenPipeError, OSError):
        return None
    return json.loads(line) if line else None


def user_kubeconfig(server, name: str) -> str:
    """``manage.py kubeconfig --user name`` for ``server`` (a KapiServer)."""
    if not name or "\n" in name:
        raise ValueError(f"bad user name {name!r}")
    data_dir = str(server.data_dir)
    with _lock:
        for _ in range(2):  # a maker whose server was restarted under it is replaced once
            maker = _makers.get(data_dir)
            if maker is None or maker.poll() is not None:
                maker = _makers[data_dir] = _start(data_dir)
            answer = _ask(maker, name)
            if answer is not None and "kubeconfig" in answer:
                return answer["kubeconfig"]
            maker.kill()
            maker.wait()
            del _makers[data_dir]
    raise AssertionError(f"kubeconfig for {name} failed: {(answer or {}).get('error', 'no answer')}")


def user_token(server, name: str) -> str:
    """The bearer token of ``user_kubeconfig(server, name)``."""
    return yaml.safe_load(user_kubeconfig(server, name))["users"][0]["user"]["token"]


def new_user(server, prefix: str) -> tuple[str, str]:
    """A user no other test uses (``prefix`` and a random suffix): its name and token."""
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    return name, user_token(server, name)


def forget(data_dir) -> None:
    """End the process of ``data_dir``'s server, if any (it is stopping)."""
    with _lock:
        maker = _makers.pop(str(data_dir), None)
    if maker is not None:
        maker.stdin.close()
        try:
            maker.wait(10)
        except subprocess.TimeoutExpired:
            maker.kill()
            maker.wait()


def serve(data_dir: str) -> None:
    """The process behind ``user_kubeconfig`` (for ``data_dir``'s server)."""
    os.environ["KAPI_DATA_DIR"] = os.path.abspath(data_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections

    for line in sys.stdin:
        out, err = io.StringIO(), io.StringIO()
        try:
            call_command("kubeconfig", "--data-dir", data_dir, "--user", line.strip(), stdout=out, stderr=err)
            answer = {"kubeconfig": out.getvalue()}
        except BaseException as exc:  # noqa: BLE001 - reported to the test
            answer = {"error": f"{type(exc).__name__}: {exc}\n{err.getvalue()}"}
        finally:
            connections.close_all()
        print(json.dumps(answer), flush=True)
