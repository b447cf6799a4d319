"""Every failure of validate-on-push reaches the pusher as one readable line.

The real hook script (``sync/prereceive_hook.py``, run as git runs it) against
real HTTP servers that answer as a broken endpoint or a proxy might: an HTML
error page, JSON errors, a malformed answer. And the endpoint's own guard
(``sync.hookerrors.refusing``) on views that raise: a JSON refusal with the
status kube would give, never Django's HTML page.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import django
import pytest

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
django.setup()

from django.db import OperationalError  # noqa: E402
from django.test import RequestFactory  # noqa: E402

from kapi import errors  # noqa: E402
from sync.hookerrors import refusing  # noqa: E402

HOOK = Path(__file__).resolve().parents[2] / "sync" / "prereceive_hook.py"
HTML = b"<!doctype html>\n<html><head><title>Server Error (500)</title></head><body><h1>Server Error</h1></body></html>"


def _answering(status: int, body: bytes, content_type: str):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _hook(status: int, body: bytes, content_type: str = "application/json") -> subprocess.CompletedProcess:
    server = _answering(status, body, content_type)
    try:
        env = {**os.environ, "KAPI_PRERECEIVE_URL": f"http://127.0.0.1:{server.server_port}/hooks/pre-receive/ns/app",
               "KAPI_PUSH_TOKEN": "t"}
        return subprocess.run([sys.executable, "-I", "-S", str(HOOK), "ns", "app"], input=f"{'0' * 40} {'1' * 40} "
                              "refs/heads/main\n", env=env, capture_output=True, text=True, timeout=60)
    finally:
        server.shutdown()
        server.server_close()


def test_an_html_error_page_becomes_one_line_and_a_refusal():
    done = _hook(500, HTML, "text/html")
    assert done.returncode == 1
    assert done.stderr == "kapi: push rejected: cannot validate it: the server answered HTTP 500\n"


def test_a_json_error_shows_its_message_or_lines():
    done = _hook(503, json.dumps({"message": "the database is\nunavailable"}).encode())
    assert done.returncode == 1
    assert done.stderr == "kapi: push rejected: cannot validate it: the database is unavailable\n"
    lines = {"accepted": False, "messages": ["kapi: push rejected: cannot validate it: boom (request id r1)"]}
    done = _hook(500, json.dumps(lines).encode())
    assert (done.returncode, done.stderr) == (1, "kapi: push rejected: cannot validate it: boom (request id r1)\n")


@pytest.mark.parametrize("answer", [
    {"accepted": "yes"},
    {"accepted": 1, "messages": "not a list"},
    ["accepted", True],
])
def test_only_an_explicit_acceptance_accepts(answer):
    done = _hook(200, json.dumps(answer).encode())
    assert done.returncode == 1
    assert "Traceback" not in done.stderr


def test_an_acceptance_prints_its_lines():
    done = _hook(200, json.dumps({"accepted": True, "messages": ["kapi: Sync ns/app: 1 to create"]}).encode())
    assert (done.returncode, done.stderr) == (0, "kapi: Sync ns/app: 1 to create\n")


@pytest.mark.parametrize(("exc", "code", "text"), [
    (RuntimeError("boom"), 500, "kapi: push rejected: cannot validate it: Internal error occurred: RuntimeError: boom"),
    (OperationalError("connection refused"), 503,
     "kapi: push rejected: cannot validate it: the database is unavailable, try again"),
    (errors.StatusError(errors.status_failure(403, "Forbidden", "no")), 403,
     "kapi: push rejected: cannot validate it: no"),
])
def test_the_endpoint_guard_answers_a_refusal_in_json(exc, code, text):
    @refusing
    def view(request, namespace, name):
        raise exc

    response = view(RequestFactory().post("/hooks/pre-receive/ns/app"), "ns", "app")
    assert response.status_code == code and response["Content-Type"] == "application/json"
    body = json.loads(response.content)
    assert body["accepted"] is False and body["messages"][0].startswith(text)


def test_lines_keep_their_indentation_but_no_control_characters():
    """The plan's indented lines reach the pusher as they are; a newline or an
    escape sequence in a message cannot forge more remote: lines or colours."""
    messages = ["  + ConfigMap ns/a", "evil\nremote: fake\x1b[31m"]
    done = _hook(200, json.dumps({"accepted": True, "messages": messages}).encode())
    assert (done.returncode, done.stderr) == (0, "  + ConfigMap ns/a\nevil remote: fake [31m\n")
