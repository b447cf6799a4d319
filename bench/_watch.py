"""Helpers for the watch benchmarks: a server with N API processes, async
watchers (one connection each: aiohttp, or a raw HTTP/1.1-over-TLS protocol
that costs the client far less per event) and a stream checker."""

from __future__ import annotations

import asyncio
import contextlib
import re
import ssl
import tempfile
import time
from pathlib import Path

import aiohttp
from _load import Target

__all__ = ["check_streams", "raw_watcher", "serve", "watcher"]

_RV = re.compile(rb'"resourceVersion":"(\d+)"')
_TYPE = re.compile(rb'^\{"type":"(\w+)"')


@contextlib.contextmanager
def serve(workers: int, env: dict | None = None):
    """A fresh ``serve`` with ``workers`` API processes; bookmarks every second."""
    env = {"KAPI_WATCH_BOOKMARK_SECONDS": "1", **(env or {})}
    import os

    from kapi_testserver import start_server, stop_server

    with tempfile.TemporaryDirectory(prefix="kapi-bench-watch-") as tmp:
        srv = start_server(Path(tmp) / "data", args=("--workers", str(workers)), env={**os.environ, **(env or {})})
        try:
            yield Target(srv.url, srv.token, str(srv.ca_path)), srv
        finally:
            stop_server(srv)


async def watcher(session: aiohttp.ClientSession, target: Target, path: str, ready: asyncio.Event | None,
                  events: list, stop_at: list, ssl_ctx: ssl.SSLContext) -> None:
    """Append (type, rv, monotonic receipt time) per event until an event at
    or after ``stop_at[0]`` (set later) arrives. Parses only the type and the
    version (the object's own, the first in the line) to keep the client cheap."""
    headers = {"Authorization": f"Bearer {target.token}"}
    async with session.get(target.url + path, headers=headers, ssl=ssl_ctx, timeout=aiohttp.ClientTimeout(total=None, sock_read=120)) as r:
        assert r.status == 200, await r.text()
        if ready is not None:
            ready.set()
        while True:
            line = await r.content.readline()
            if not line:
                return
            now = time.monotonic()
            kind = _TYPE.match(line).group(1).decode()
            rv = int(_RV.search(line).group(1))
            events.append((kind, rv, now))
            if stop_at and rv >= stop_at[0]:
                return


class _WatchStream(asyncio.Protocol):
    """One watch over a raw connection: sends the GET, decodes the chunked
    body and records (type, rv, receipt time) per line, the time being that
    of the ``data_received`` call that completed the line."""

    def __init__(self, request: bytes, ready: asyncio.Event | None, events: list, stop_at: list,
                 done: asyncio.Future) -> None:
        self.request = request
        self.ready = ready
        self.events = events
        self.stop_at = stop_at
        self.done = done
        self.raw = bytearray()  # undecoded bytes (headers, then chunk framing)
        self.body = bytearray()  # decoded body bytes not yet ending in a newline
        self.headers_seen = False
        self.transport = None

    def connection_made(self, transport) -> None:
        self.transport = transport
        transport.write(self.request)

    def data_received(self, data: bytes) -> None:
        now = time.monotonic()
        raw = self.raw
        raw += data
        if not self.headers_seen:
            end = raw.find(b"\r\n\r\n")
            if end < 0:
                return
            head = bytes(raw[:end]).lower()
            del raw[: end + 4]
            if not head.startswith(b"http/1.1 200") or b"transfer-encoding: chunked" not in head:
                self._finish(AssertionError(head.decode("latin-1")))
                return
            self.headers_seen = True
            if self.ready is not None:
                self.ready.set()
        pos = 0
        while True:
            eol = raw.find(b"\r\n", pos)
            if eol < 0:
                break
            size = int(raw[pos:eol].split(b";", 1)[0], 16)
            if size == 0:
                self._lines(now)
                self._finish(None)
                return
            if len(raw) < eol + 2 + size + 2:
                break
            self.body += raw[eol + 2 : eol + 2 + size]
            pos = eol + 2 + size + 2
        del raw[:pos]
        self._lines(now)

    def _lines(self, now: float) -> None:
        body = self.body
        cut = body.rfind(b"\n")
        if cut < 0:
            return
        for line in bytes(body[:cut]).split(b"\n"):
            kind = _TYPE.match(line).group(1).decode()
            rv = int(_RV.search(line).group(1))
            self.events.append((kind, rv, now))
            if self.stop_at and rv >= self.stop_at[0]:
                self._finish(None)
                return
        del body[: cut + 1]

    def _finish(self, error: BaseException | None) -> None:
        if not self.done.done():
            if error is None:
                self.done.set_result(None)
            else:
                self.done.set_exception(error)
        if self.transport is not None:
            self.transport.close()

    def connection_lost(self, exc) -> None:
        self._finish(None)


async def raw_watcher(target: Target, path: str, ready: asyncio.Event | None, events: list,
                      stop_at: list, ssl_ctx: ssl.SSLContext) -> None:
    """What :func:`watcher` records, over a plain asyncio protocol (TLS as
    kubectl uses it, HTTP/1.1 chunked as the server sends it) instead of
    aiohttp's reader stack: about a tenth of the client CPU per event, so that
    a client sharing the server's cores measures the server, not itself."""
    from urllib.parse import urlsplit

    parts = urlsplit(target.url)
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {parts.hostname}:{parts.port}\r\n"
        f"Authorization: Bearer {target.token}\r\nAccept: application/json\r\n"
        "User-Agent: kapi-bench\r\n\r\n"
    ).encode()
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    await loop.create_connection(
        lambda: _WatchStream(request, ready, events, stop_at, done),
        parts.hostname, parts.port, ssl=ssl_ctx if parts.scheme == "https" else None,
    )
    await done


def check_streams(streams: list[list], expected: list[tuple[str, int]]) -> dict:
    """Missed, duplicated and reordered events over all streams, against the
    expected (type, rv) sequence."""
    want = {rv: kind for kind, rv in expected}
    missed = duplicated = reordered = wrong_type = 0
    for events in streams:
        got = [(k, rv) for k, rv, _ in events if k != "BOOKMARK"]
        rvs = [rv for _, rv in got]
        seen = set()
        last = 0
        for kind, rv in got:
            if rv in seen:
                duplicated += 1
            seen.add(rv)
            if rv < last:
                reordered += 1
            last = max(last, rv)
            if rv in want and want[rv] != kind:
                wrong_type += 1
        missed += len(set(want) - set(rvs))
    return {"missed": missed, "duplicated": duplicated, "reordered": reordered, "wrong_type": wrong_type}
