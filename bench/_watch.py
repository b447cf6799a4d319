"""Helpers for the watch benchmarks: a server with N API processes, async
watchers (aiohttp, one connection each) and a stream checker."""

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

__all__ = ["check_streams", "serve", "watcher"]

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
