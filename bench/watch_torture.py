"""Consistency torture: W concurrent writers for S seconds, N watchers, on a
server with two API processes (writers and watchers spread over both).

Every watcher's stream is compared with the change log in the database:
missed/duplicated/reordered must be 0. Also reports the write rate and the
cost of the horizon (``kapi_rv_horizon()``) measured during the run.

    python bench/watch_torture.py [--writers 8] [--seconds 30] [--watchers 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import ssl
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import aiohttp
import psycopg
from _load import percentile
from _watch import check_streams, serve, watcher


def write_loop(target, seed: int, stop: threading.Event, counts: list) -> None:
    rnd = random.Random(seed)
    conn = target.connection()
    names = [f"w{seed}-{i}" for i in range(8)]
    base = "/api/v1/namespaces/torture/configmaps"
    n = 0
    while not stop.is_set():
        name = rnd.choice(names)
        conn.request("GET", f"{base}/{name}", headers=target.headers())
        r = conn.getresponse()
        obj = json.loads(r.read())
        if r.status == 404:
            conn.request("POST", base, body=json.dumps({"metadata": {"name": name}, "data": {"n": "0"}}).encode(), headers=target.headers())
        elif rnd.random() < 0.2:
            conn.request("DELETE", f"{base}/{name}", headers=target.headers())
        else:
            obj["data"] = {"n": str(int(obj["data"]["n"]) + 1)}
            conn.request("PUT", f"{base}/{name}", body=json.dumps(obj).encode(), headers=target.headers())
        r = conn.getresponse()
        r.read()
        assert r.status in (200, 201, 404, 409), r.status
        n += r.status in (200, 201)
    counts.append(n)


def horizon_probe(dsn: str, stop: threading.Event, out: list) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        while not stop.is_set():
            t = time.perf_counter()
            conn.execute("SELECT kapi_rv_horizon()").fetchone()
            out.append(time.perf_counter() - t)
            time.sleep(0.01)


async def main(args) -> dict:
    from kapi.runtime.config import _embedded_postgres_url

    with serve(workers=2) as (target, srv):
        dsn = _embedded_postgres_url(srv.data_dir / "postgres")
        conn = target.connection()
        conn.request("POST", "/api/v1/namespaces", body=b'{"metadata":{"name":"torture"}}', headers=target.headers())
        start_rv = json.loads(conn.getresponse().read())["metadata"]["resourceVersion"]
        ssl_ctx = ssl.create_default_context(cafile=target.ca_path)
        streams: list[list] = [[] for _ in range(args.watchers)]
        stop_at: list[int] = []
        path = f"/api/v1/namespaces/torture/configmaps?watch=1&resourceVersion={start_rv}&allowWatchBookmarks=true"
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0, ssl=ssl_ctx)) as session:
            readies = [asyncio.Event() for _ in range(args.watchers)]
            # Separate connections: the two uvicorn processes share the port, so
            # watchers land on both.
            tasks = [asyncio.create_task(watcher(session, target, path, readies[i], streams[i], stop_at, ssl_ctx))
                     for i in range(args.watchers)]
            await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 60)
            stop = threading.Event()
            counts: list = []
            horizon: list = []
            threads = [threading.Thread(target=write_loop, args=(target, i, stop, counts)) for i in range(args.writers)]
            threads.append(threading.Thread(target=horizon_probe, args=(dsn, stop, horizon)))
            t0 = time.monotonic()
            for t in threads:
                t.start()
            await asyncio.sleep(args.seconds)
            stop.set()
            while any(t.is_alive() for t in threads):
                await asyncio.sleep(0.1)
            elapsed = time.monotonic() - t0
            with psycopg.connect(dsn, autocommit=True) as db:
                rows = db.execute(
                    "SELECT type, resource_version FROM kapi_change WHERE resource = 'configmaps' "
                    "AND namespace = 'torture' AND resource_version > %s ORDER BY resource_version",
                    [int(start_rv)]).fetchall()
            stop_at.append(rows[-1][1])
            await asyncio.wait_for(asyncio.gather(*tasks), 120)  # bookmarks wake them
        figures = check_streams(streams, [(t, rv) for t, rv in rows])
        figures.update(
            writers=args.writers, seconds=args.seconds, watchers=args.watchers,
            writes=len(rows), writes_per_s=round(len(rows) / elapsed, 1),
            events_delivered=sum(len([e for e in s if e[0] != "BOOKMARK"]) for s in streams),
            horizon_p50_ms=round(percentile(horizon, 50) * 1000, 2),
            horizon_p99_ms=round(percentile(horizon, 99) * 1000, 2),
        )
        return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--watchers", type=int, default=5)
    print(json.dumps(asyncio.run(main(parser.parse_args())), indent=1))
