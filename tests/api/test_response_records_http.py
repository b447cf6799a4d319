"""An answer's headers and body leave the server together
(``kapi.runtime.coalescing``): one TLS record for a small answer, where
uvicorn alone writes two. A watch, whose body may not follow for minutes,
still gets its headers at once.
"""

from __future__ import annotations

import socket
import ssl
import struct
from urllib.parse import urlsplit

APPLICATION_DATA = 23


class _RawTLS:
    """A TLS client over a plain socket that sees the records it receives."""

    def __init__(self, url: str, ca_path) -> None:
        parts = urlsplit(url)
        self.host = parts.hostname
        self.sock = socket.create_connection((parts.hostname, parts.port), timeout=10)
        context = ssl.create_default_context(cafile=str(ca_path))
        self.incoming, self.outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
        self.tls = context.wrap_bio(self.incoming, self.outgoing, server_hostname=parts.hostname)
        self.raw = b""
        while True:
            try:
                self.tls.do_handshake()
                break
            except ssl.SSLWantReadError:
                self._pump()
        self._pump(send_only=True)

    def _pump(self, send_only: bool = False) -> None:
        pending = self.outgoing.read()
        if pending:
            self.sock.sendall(pending)
        if not send_only:
            data = self.sock.recv(65536)
            assert data, "the server closed the connection"
            self.raw += data
            self.incoming.write(data)

    def request(self, path: str, token: str) -> tuple[bytes, list[int]]:
        """Send a GET; returns the answer and the sizes of the application
        data records that carried it."""
        self.raw = b""
        self.tls.write(
            f"GET {path} HTTP/1.1\r\nHost: {self.host}\r\nAuthorization: Bearer {token}\r\n"
            "Accept: application/json\r\n\r\n".encode()
        )
        self._pump(send_only=True)
        answer = b""
        while True:
            try:
                answer += self.tls.read(65536)
            except ssl.SSLWantReadError:
                self._pump()
                continue
            head, sep, body = answer.partition(b"\r\n\r\n")
            if sep:
                length = next(
                    int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                if len(body) >= length:
                    return answer, self._records()

    def _records(self) -> list[int]:
        sizes, at = [], 0
        while at + 5 <= len(self.raw):
            kind, _version, size = struct.unpack("!BHH", self.raw[at:at + 5])
            if kind == APPLICATION_DATA:
                sizes.append(size)
            at += 5 + size
        return sizes

    def close(self) -> None:
        self.sock.close()


def test_a_small_answer_is_one_tls_record(kapi_server, namespace):
    client = _RawTLS(kapi_server.url, kapi_server.ca_path)
    try:
        # The first answer may share the wire with TLS 1.3's session tickets.
        client.request("/version", kapi_server.token)
        for path in ("/version", f"/api/v1/namespaces/{namespace}/configmaps", "/api/v1/namespaces/no-such-ns/pods/x"):
            answer, records = client.request(path, kapi_server.token)
            assert answer.startswith(b"HTTP/1.1 "), answer[:100]
            assert b"\r\n\r\n{" in answer
            assert len(records) == 1, (path, records)
    finally:
        client.close()


def test_a_watch_gets_its_headers_before_any_event(api, namespace):
    # From the list's version on, nothing happens in the namespace: the
    # headers must not wait for a body (requests returns once they arrived).
    listed = api.get(f"/api/v1/namespaces/{namespace}/configmaps")
    response = api.session.get(
        f"{api.server.url}/api/v1/namespaces/{namespace}/configmaps",
        params={"watch": "1", "timeoutSeconds": "30", "resourceVersion": listed.json()["metadata"]["resourceVersion"]},
        stream=True, timeout=(5, 5),
    )
    try:
        assert response.status_code == 200
        assert response.headers["Content-Type"].startswith("application/json")
        assert response.headers["Transfer-Encoding"] == "chunked"
    finally:
        response.close()
