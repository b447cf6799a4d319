"""``serve > FILE`` does not grow for ever (kapi.runtime.logfile).

A real ``serve`` with its stdout and stderr on a regular file (as the test
harness starts it) and ``KAPI_LOG_MAXSIZE`` at 50 KiB logs a JSON line per
request; under a few hundred requests the file is trimmed to a ``.1`` copy
and restarted, without the hole of NUL bytes a plain truncation would leave.
"""

from __future__ import annotations

import http.client
import json
import os
import ssl
from urllib.parse import urlsplit

import pytest
from kapi_testserver import serving
from sync_gitops import wait_for


@pytest.fixture(scope="module")
def small_log_server():
    yield from serving({**os.environ, "KAPI_LOG_MAXSIZE": "0.05", "KAPI_REQUEST_LOG": "1"})


def test_log_file_is_kept_under_its_limit(small_log_server) -> None:
    """After ~600 requests (about 200 KiB of request lines) the log and its
    .1 copy are each far under what was written, hold whole JSON lines and
    no NUL bytes, and the newest requests are in the log."""
    server = small_log_server
    parts = urlsplit(server.url)
    conn = http.client.HTTPSConnection(
        parts.hostname, parts.port, context=ssl.create_default_context(cafile=str(server.ca_path)))
    for i in range(600):
        conn.request("GET", "/api/v1/namespaces/default/configmaps",
                     headers={"Authorization": f"Bearer {server.token}", "X-Request-Id": f"soak-{i}"})
        response = conn.getresponse()
        response.read()
        assert response.status == 200
    conn.close()

    log = server.log_path
    backup = log.with_name(log.name + ".1")
    wait_for(lambda: backup.exists() and b"soak-599" in log.read_bytes() + backup.read_bytes(),
             timeout=30, what="the last request's log line")
    whole = []
    for path in (log, backup):
        data = path.read_bytes()
        assert b"\0" not in data, path
        assert len(data) < 150 * 1024, (path, len(data))
        # Every line but a partial last one (after the last newline) is JSON.
        # The server goes on logging (its controllers) while this reads, so
        # the log may just have been restarted: empty, or one partial line.
        lines = [line for line in data.split(b"\n")[:-1] if line.startswith(b"{")]
        assert all(isinstance(json.loads(line), dict) for line in lines), path
        whole += lines
    assert any(b'"requestID":"soak-' in line for line in whole)
