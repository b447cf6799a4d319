"""Fan-out: N concurrent watchers on ONE server process, W writes at a steady rate.

Figures: delivery delay from the write's response to each watcher's receipt
(p50/p99/max), and missed/duplicated/reordered events (must be 0).

    python bench/watch_fanout.py [--watchers 1000] [--writes 500] [--rate 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import ssl
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import aiohttp
from _load import percentile
from _watch import check_streams, serve, watcher


def writer(target, writes: int, rate: float, out: list, prefix: str = "cm") -> None:
    conn = target.connection()
    interval = 1.0 / rate
    next_at = time.monotonic()
    for i in range(writes):
        next_at += interval
        body = json.dumps({"metadata": {"name": f"{prefix}-{i}"}, "data": {"i": str(i)}}).encode()
        conn.request("POST", "/api/v1/namespaces/bench/configmaps", body=body, headers=target.headers())
        resp = conn.getresponse()
        payload = json.loads(resp.read())
        assert resp.status == 201, payload
        out.append((int(payload["metadata"]["resourceVersion"]), time.monotonic()))
        delay = next_at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    conn.close()


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
        async with aiohttp.ClientSession(connector=connector) as session:
            readies = [asyncio.Event() for _ in range(args.watchers)]
            t0 = time.monotonic()
            tasks = []
            for i in range(args.watchers):
                tasks.append(asyncio.create_task(watcher(session, target, path, readies[i], streams[i], stop_at, ssl_ctx)))
                if i % 50 == 49:
                    await asyncio.sleep(0.05)
            await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 300)
            connect_s = time.monotonic() - t0
            writes: list = []
            thread = threading.Thread(target=writer, args=(target, args.writes, args.rate, writes))
            thread.start()
            while thread.is_alive():
                await asyncio.sleep(0.1)
            stop_at.append(writes[-1][0])
            sentinel: list = []  # one more write, so that every watcher wakes after stop_at is set
            await asyncio.to_thread(writer, target, 1, 1.0, sentinel, "sentinel")
            await asyncio.wait_for(asyncio.gather(*tasks), 120)
        written = dict(writes)
        delays = [t - written[rv] for s in streams for k, rv, t in s if rv in written]
        figures = check_streams(streams, [("ADDED", rv) for rv, _ in writes])
        figures.update(
            watchers=args.watchers, writes=len(writes), rate=args.rate, connect_s=round(connect_s, 1),
            deliveries=len(delays),
            p50_ms=round(percentile(delays, 50) * 1000, 1), p99_ms=round(percentile(delays, 99) * 1000, 1),
            max_ms=round(max(delays) * 1000, 1),
        )
        return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--watchers", type=int, default=1000)
    parser.add_argument("--writes", type=int, default=500)
    parser.add_argument("--rate", type=float, default=50.0)
    print(json.dumps(asyncio.run(main(parser.parse_args())), indent=1))
