"""A watcher whose client stops reading is terminated by the server and counted
in ``apiserver_terminated_watchers_total``; watchers that keep up, over the
same writes, are not.

Runs its own ``serve`` with a small watch cache (``KAPI_WATCH_CACHE_EVENTS``)
so that a few hundred events overflow it. The slow client is a raw TLS socket
with a small receive buffer that reads the response headers and then nothing:
the server's writes to it block, and only the channel's overflow check can end
it. Big ConfigMaps fill the socket buffers quickly.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest
import requests
from kapi_testserver import (
    KapiServer,
    serving,
)

from tests.api.conftest import ROOT_CA

CACHE_EVENTS = 100
PAYLOAD = "x" * 4096
MAX_WRITES = 3000


@pytest.fixture(scope="module")
def small_cache_server() -> Iterator[KapiServer]:
    env = {**os.environ, "KAPI_WATCH_CACHE_EVENTS": str(CACHE_EVENTS), "KAPI_REQUEST_LOG": "0"}
    yield from serving(env)


def _session(server: KapiServer) -> requests.Session:
    session = requests.Session()
    session.trust_env = False
    session.verify = str(server.ca_path)
    session.headers["Authorization"] = f"Bearer {server.token}"
    return session


def _metric(server: KapiServer, name: str, resource: str) -> float:
    text = _session(server).get(server.url + "/metrics", timeout=30).text
    return sum(
        float(line.rpartition(" ")[2]) for line in text.splitlines()
        if line.startswith(name + "{") and f'resource="{resource}"' in line
    )


class StalledWatch:
    """A watch request on a socket that is never read after the headers."""

    def __init__(self, server: KapiServer, path: str) -> None:
        url = urlsplit(server.url)
        raw = socket.socket()
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.connect((url.hostname, url.port))
        context = ssl.create_default_context(cafile=str(server.ca_path))
        self.sock = context.wrap_socket(raw, server_hostname=url.hostname)
        self.sock.sendall(
            f"GET {path} HTTP/1.1\r\nHost: {url.netloc}\r\n"
            f"Authorization: Bearer {server.token}\r\nAccept: application/json\r\n\r\n".encode()
        )
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            assert chunk, "the watch was closed before its headers"
            head += chunk
        assert head.startswith(b"HTTP/1.1 200"), head

    def drain_until_closed(self, timeout: float) -> bytes:
        """Read what is left; returns once the server has closed the connection."""
        self.sock.settimeout(timeout)
        data = b""
        try:
            while chunk := self.sock.recv(65536):
                data += chunk
        except (ConnectionResetError, ssl.SSLError):
            pass  # aborted: buffered bytes were discarded
        return data

    def close(self) -> None:
        self.sock.close()


def _fast_watch(server: KapiServer, path: str, seen: list, done: threading.Event,
                opened: threading.Event) -> None:
    with _session(server).get(server.url + path, stream=True, timeout=120) as response:
        assert response.status_code == 200
        opened.set()
        for line in response.iter_lines():
            if line:
                name = json.loads(line)["object"]["metadata"]["name"]
                if name != ROOT_CA:  # the root-CA publisher's, in every namespace
                    seen.append(name)
    done.set()  # the stream ended (it must not, before the test stops it)


def test_stalled_watcher_is_terminated_and_fast_ones_are_not(
    small_cache_server: KapiServer,
) -> None:
    server = small_cache_server
    api = _session(server)
    ns = f"slow-{uuid.uuid4().hex[:6]}"
    assert api.post(server.url + "/api/v1/namespaces", json={"metadata": {"name": ns}},
                    timeout=30).status_code == 201
    rv = api.get(server.url + f"/api/v1/namespaces/{ns}/configmaps", timeout=30).json()[
        "metadata"]["resourceVersion"]
    watch_path = f"/api/v1/namespaces/{ns}/configmaps?watch=1&resourceVersion={rv}"
    terminated_before = _metric(server, "apiserver_terminated_watchers_total", "configmaps")

    stalled = StalledWatch(server, watch_path + "&timeoutSeconds=300")
    fast_seen: list[list[str]] = [[], []]
    fast_ended = [threading.Event(), threading.Event()]
    for seen, ended in zip(fast_seen, fast_ended, strict=True):
        opened = threading.Event()
        threading.Thread(target=_fast_watch, daemon=True, args=(
            server, watch_path + "&timeoutSeconds=120", seen, ended, opened)).start()
        assert opened.wait(30)

    written: list[str] = []

    def create(name: str) -> None:
        body = {"metadata": {"name": name}, "data": {"payload": PAYLOAD}}
        r = api.post(server.url + f"/api/v1/namespaces/{ns}/configmaps", json=body, timeout=60)
        assert r.status_code == 201, r.text
        written.append(name)

    # Write in rounds until the server has given up on the stalled watcher
    # (the socket buffers it fills first vary with the kernel).
    terminated = terminated_before
    with ThreadPoolExecutor(8) as pool:
        while terminated == terminated_before:
            assert len(written) < MAX_WRITES, "the stalled watcher was never terminated"
            names = [f"cm-{len(written) + i}" for i in range(CACHE_EVENTS)]
            list(pool.map(create, names))
            terminated = _metric(server, "apiserver_terminated_watchers_total", "configmaps")

    # The server ended the stalled watch without waiting for its client to
    # read: only the fast watches are still open requests...
    deadline = time.monotonic() + 30
    while _metric(server, "apiserver_longrunning_requests", "configmaps") != len(fast_seen):
        assert time.monotonic() < deadline, "the stalled watch is still open"
        time.sleep(0.2)
    # ...and its client gets what was in flight, cut short, then the end.
    left = stalled.drain_until_closed(timeout=30)
    stalled.close()
    assert left.count(b'"type":"ADDED"') < len(written)

    # The fast watchers got every event on their one stream, which is still open.
    deadline = time.monotonic() + 30
    while any(len(seen) < len(written) for seen in fast_seen):
        assert time.monotonic() < deadline, [len(s) for s in fast_seen]
        time.sleep(0.2)
    for seen, ended in zip(fast_seen, fast_ended, strict=True):
        assert sorted(seen) == sorted(written)
        assert not ended.is_set()
    assert terminated - terminated_before == 1
    # Dropping the connection is not an application error.
    assert "Exception in ASGI" not in server.output()
    assert "ASGI callable returned" not in server.output()
    print("FIGURE", {"test": "slow_watcher", "writes": len(written),
                     "terminated_watchers": terminated - terminated_before})
