"""Fan-out: N concurrent watchers on ONE server process, W writes at a steady rate.

Figures: delivery delay from the write's response to each watcher's receipt
(p50/p99/max), and missed/duplicated/reordered events (must be 0).

    python bench/watch_fanout.py [--watchers 1000] [--writes 500] [--rate 50] [--client raw|aiohttp]

The watchers run in this process on one event loop (uvloop when installed),
each over its own TLS connection; ``--client raw`` (the default) reads them
with a plain asyncio protocol, ``aiohttp`` with aiohttp's client (several
times the CPU per event, which on a shared 2-core box shows up as delay).
The writer runs in a process of its own, so its response timestamps do not
wait for this process's GIL; both sides use the system-wide monotonic clock.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import ssl
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import aiohttp
from _load import percentile
from _watch import check_streams, raw_watcher, serve, watcher


def writer(target, writes: int, rate: float, prefix: str = "cm") -> list:
    """(rv, monotonic time of the response) per write; runs in its own process."""
    out: list = []
    conn = target.connection()
    interval = 1.0 / rate
    next_at = time.monotonic()
    for i in range(writes):
        next_at += interval
        body = json.dumps({"metadata": {"name": f"{prefix}-{i}"}, "data": {"i": str(i)}}).encode()
        conn.request("POST", "/api/v1/namespaces/bench/configmaps", body=body, headers=target.headers())
        resp = conn.getresponse()
        raw = resp.read()
        answered = time.monotonic()  # before parsing: the figure starts at the response
        payload = json.loads(raw)
        assert resp.status == 201, payload
        out.append((int(payload["metadata"]["resourceVersion"]), answered))
        delay = next_at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    conn.close()
    return out


async def main(args) -> dict:
    with serve(workers=1) as (target, _srv):
        conn = target.connection()
        conn.request("POST", "/api/v1/namespaces", body=b'{"metadata":{"name":"bench"}}', headers=target.headers())
        resp = conn.getresponse()
        start_rv = json.loads(resp.read())["metadata"]["resourceVersion"]
        ssl_ctx = ssl.create_default_context(cafile=target.ca_path)
        streams: list[list] = [[] for _ in range(args.watchers)]
        stop_at: list[int] = []
        path = f"/api/v1/namespaces/bench/configmaps?watch=1&resourceVersion={start_rv}"
        connector = aiohttp.TCPConnector(limit=0, ssl=ssl_ctx)
        loop = asyncio.get_running_loop()
        pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        async with aiohttp.ClientSession(connector=connector) as session:
            readies = [asyncio.Event() for _ in range(args.watchers)]
            t0 = time.monotonic()
            tasks = []
            for i in range(args.watchers):
                if args.client == "raw":
                    watch = raw_watcher(target, path, readies[i], streams[i], stop_at, ssl_ctx)
                else:
                    watch = watcher(session, target, path, readies[i], streams[i], stop_at, ssl_ctx)
                tasks.append(asyncio.create_task(watch))
                if i % 50 == 49:
                    await asyncio.sleep(0.05)
            await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 300)
            connect_s = time.monotonic() - t0
            writes = await loop.run_in_executor(pool, writer, target, args.writes, args.rate)
            stop_at.append(writes[-1][0])
            # One more write, so that every watcher wakes after stop_at is set.
            await loop.run_in_executor(pool, writer, target, 1, 1.0, "sentinel")
            await asyncio.wait_for(asyncio.gather(*tasks), 120)
        pool.shutdown()
        written = dict(writes)
        delays = [t - written[rv] for s in streams for k, rv, t in s if rv in written]
        figures = check_streams(streams, [("ADDED", rv) for rv, _ in writes])
        figures.update(
            client=args.client, watchers=args.watchers, writes=len(writes), rate=args.rate, connect_s=round(connect_s, 1),
            deliveries=len(delays),
            p50_ms=round(percentile(delays, 50) * 1000, 1), p99_ms=round(percentile(delays, 99) * 1000, 1),
            max_ms=round(max(delays) * 1000, 1),
        )
        # Where the delay is: until the first watcher has a write (notify,
        # horizon, change-log read) and from there to the last (the fan-out).
        first: dict = {}
        last: dict = {}
        for s in streams:
            for _k, rv, t in s:
                if rv in written:
                    first[rv] = min(first.get(rv, t), t)
                    last[rv] = max(last.get(rv, t), t)
        firsts = [first[rv] - written[rv] for rv in first]
        spreads = [last[rv] - first[rv] for rv in first]
        figures.update(
            first_p50_ms=round(percentile(firsts, 50) * 1000, 1), first_p99_ms=round(percentile(firsts, 99) * 1000, 1),
            first_max_ms=round(max(firsts) * 1000, 1),
            spread_p50_ms=round(percentile(spreads, 50) * 1000, 1), spread_p99_ms=round(percentile(spreads, 99) * 1000, 1),
        )
        return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--watchers", type=int, default=1000)
    parser.add_argument("--writes", type=int, default=500)
    parser.add_argument("--rate", type=float, default=50.0)
    parser.add_argument("--client", choices=("raw", "aiohttp"), default="raw")
    try:
        import uvloop
    except ImportError:
        run = asyncio.run
    else:
        run = uvloop.run
    print(json.dumps(run(main(parser.parse_args())), indent=1))
