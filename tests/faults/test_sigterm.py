"""Graceful shutdown: SIGTERM to serve while clients write and watch.

Every request that got an answer got a real one (2xx, or 503 if it raced the
shutdown, never a 500), writes that were acknowledged are stored, the watch
ends cleanly (a complete chunked stream, not a reset), an idle keep-alive
client does not hold the shutdown, nor does a connection whose TLS handshake
ends after the shutdown began, and serve exits 0 in time leaving no process
behind (``stop_server`` checks that)."""

from __future__ import annotations

import json
import socket
import ssl
import threading
import time
import uuid
from urllib.parse import urlsplit

import psycopg
import requests
from kapi_testserver import KapiServer, stop_server

from kapi.runtime import embedded
from tests.faults.conftest import client, database_url, figure


def test_sigterm_finishes_in_flight_work(fault_server: KapiServer):
    api = client(fault_server)
    ns = f"term-{uuid.uuid4().hex[:6]}"
    assert api.request("POST", "/api/v1/namespaces", json={"metadata": {"name": ns}}).ok
    url = database_url(fault_server)
    watch_outcome: list = []

    def watch() -> None:
        # Its own connection, closed once the stream has ended.
        watcher = client(fault_server)
        events = 0
        try:
            with watcher.request("GET", f"/api/v1/namespaces/{ns}/configmaps",
                             params={"watch": "1", "timeoutSeconds": "120"},
                             stream=True, timeout=130) as response:
                for line in response.iter_lines():
                    if line:
                        json.loads(line)
                        events += 1
            watch_outcome.append(("clean", events))
        except requests.RequestException as error:
            watch_outcome.append((type(error).__name__, events))
        finally:
            watcher.session.close()

    stop = threading.Event()
    acked: list = []
    answers: list = []

    def writer(i: int) -> None:
        w = client(fault_server)
        n = 0
        while not stop.is_set():
            try:
                r = w.request("POST", f"/api/v1/namespaces/{ns}/configmaps",
                              json={"metadata": {"name": f"t{i}-{n}"}})
            except requests.RequestException:
                return  # the server has stopped listening
            answers.append(r.status_code)
            if r.status_code == 201:
                acked.append((f"t{i}-{n}", int(r.json()["metadata"]["resourceVersion"])))
            n += 1

    # A connection the server accepts now but whose TLS handshake ends only
    # once every API worker is shutting down, then asks on and on, keep-alive.
    address = urlsplit(fault_server.url)
    late = socket.create_connection((address.hostname, address.port))
    late_answers: list = []

    def late_client() -> None:
        deadline = time.monotonic() + 30
        # Each API worker closes its listening socket and, at once, every
        # connection it has: once none listens, all are past that.
        while _listening(address) and time.monotonic() < deadline:
            time.sleep(0.02)
        tls = ssl.create_default_context(cafile=str(fault_server.ca_path))
        tls.check_hostname = False
        try:
            with tls.wrap_socket(late) as conn, conn.makefile("rb") as answers_in:
                while time.monotonic() < deadline:
                    conn.sendall(b"GET /livez HTTP/1.1\r\nHost: kapi\r\n\r\n")
                    head = _response_head(answers_in)
                    if head is None:
                        return
                    late_answers.append(head)
                    if "connection: close" in head.lower():
                        return
        except OSError:
            return

    late_thread = threading.Thread(target=late_client, daemon=True)
    late_thread.start()
    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    writers = [threading.Thread(target=writer, args=(i,), daemon=True) for i in range(4)]
    for t in writers:
        t.start()
    time.sleep(1.5)
    # ``api`` keeps its idle keep-alive connection open through the stop.
    started = time.monotonic()
    # Keep PostgreSQL running after serve stops, to check what was stored.
    stop_server(fault_server)
    took = time.monotonic() - started
    stop.set()
    for t in writers:
        t.join(10)
    watcher.join(10)
    late_thread.join(10)
    # The late connection got at most one answer, and that one closed it.
    assert len(late_answers) <= 1, late_answers
    assert all("connection: close" in head.lower() for head in late_answers), late_answers
    assert watch_outcome and watch_outcome[0][0] == "clean", watch_outcome
    # Nothing was cut short, and the idle client did not hold the API workers
    # until their graceful-shutdown timeout (kapi.runtime.apiserver drops it).
    assert "timeout graceful shutdown exceeded" not in fault_server.output()
    assert set(answers) <= {201, 503}, set(answers)
    assert acked
    embedded.start_postgres(fault_server.data_dir / "postgres")
    try:
        with psycopg.connect(url, autocommit=True) as db:
            stored = dict(db.execute(
                "SELECT name, resource_version FROM kapi_object"
                " WHERE resource = 'configmaps' AND namespace = %s", [ns]).fetchall())
    finally:
        embedded.stop_postgres(fault_server.data_dir / "postgres")
    lost = [name for name, rv in acked if stored.get(name) != rv]
    assert not lost
    figure("sigterm", writes_acked=len(acked), acknowledged_writes_lost=len(lost),
           stop_seconds=round(took, 2), watch_end=watch_outcome[0][0],
           watch_events=watch_outcome[0][1])


def _response_head(stream) -> str | None:
    """The status line and headers of the next response on ``stream`` (its
    body read and dropped), or None once the server has closed it."""
    lines = []
    while True:
        line = stream.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        lines.append(line.decode("latin-1").strip())
    length = next((int(h.split(":", 1)[1]) for h in lines if h.lower().startswith("content-length:")), 0)
    stream.read(length)
    return "\n".join(lines)


def _listening(address) -> bool:
    try:
        socket.create_connection((address.hostname, address.port), timeout=5).close()
    except ConnectionRefusedError:
        return False
    return True
