"""The concurrency proof: many writers, several watchers, two server processes
on one database. Every watcher's stream must equal the change log (same
events, same order, nothing missed, nothing twice) and fold into the final
state."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from kapi_testserver import ROOT, free_port

from tests.api.conftest import API
from tests.watch.conftest import database_url, stream_events
from tests.watch.helpers import ROOT_CA, cm_path, own


@dataclass
class _Plain:
    url: str
    token: str
    ca_path: Path


@pytest.fixture
def second_process(watch_server):
    """A second API server process (uvicorn, plain HTTP) on the same database."""
    port = free_port()
    env = {**os.environ, "KAPI_DATA_DIR": str(watch_server.data_dir),
           "DATABASE_URL": database_url(watch_server), "KAPI_WATCH_BOOKMARK_SECONDS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "kapi.asgi:application", "--host", "127.0.0.1",
         "--port", str(port), "--loop", "uvloop", "--no-access-log", "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            if requests.get(url + "/readyz", timeout=2).status_code == 200:
                break
        except requests.ConnectionError:
            pass
        assert time.monotonic() < deadline and proc.poll() is None, "second process did not start"
        time.sleep(0.3)
    yield API(_Plain(url, watch_server.token, watch_server.ca_path))
    proc.terminate()
    proc.wait(timeout=15)


def _writer(api: API, ns: str, seed: int, stop: threading.Event, counts: list) -> None:
    rnd = random.Random(seed)
    names = [f"w{seed}-{i}" for i in range(4)]
    while not stop.is_set():
        name = rnd.choice(names)
        r = api.get(cm_path(ns, name))
        if r.status_code == 404:
            r = api.post(cm_path(ns), {"metadata": {"name": name}, "data": {"n": "0"}})
        elif rnd.random() < 0.2:
            r = api.delete(cm_path(ns, name))
        else:
            obj = r.json()
            obj["data"] = {"n": str(int(obj["data"]["n"]) + 1)}
            r = api.put(cm_path(ns, name), obj)
        assert r.status_code in (200, 201, 404, 409), r.text
        counts.append(r.status_code)


def test_every_watcher_sees_the_change_log_exactly(watch_api, second_process, watch_ns, db):
    """8 writers (half through each process) for 6 s, 4 watchers (2 on each
    process) from the namespace's creation: each stream equals the change
    log's rows for the namespace, in version order, and folds into the final
    list."""
    start = int(watch_api.get(f"/api/v1/namespaces/{watch_ns}").json()["metadata"]["resourceVersion"])
    final: list[int] = []

    def done(event) -> bool:
        return bool(final) and int(event["object"]["metadata"]["resourceVersion"]) >= final[0]

    results: dict[int, list] = {}

    def watcher(i: int, api: API) -> None:
        results[i] = stream_events(api, cm_path(watch_ns), {"resourceVersion": str(start), "allowWatchBookmarks": "true"},
                                   until=done, timeout=60)

    apis = [watch_api, second_process]
    watchers = [threading.Thread(target=watcher, args=(i, apis[i % 2])) for i in range(4)]
    for t in watchers:
        t.start()
    stop = threading.Event()
    counts: list = []
    writers = [threading.Thread(target=_writer, args=(apis[i % 2], watch_ns, i, stop, counts)) for i in range(8)]
    for t in writers:
        t.start()
    time.sleep(6)
    stop.set()
    for t in writers:
        t.join()
    rows = db.execute(
        "SELECT resource_version, type, name, data->'data'->>'n' FROM kapi_change "
        "WHERE \"group\" = '' AND resource = 'configmaps' AND namespace = %s AND resource_version > %s "
        "AND name <> %s ORDER BY resource_version", [watch_ns, start, ROOT_CA]).fetchall()
    expected = [(t, n, v, d) for v, t, n, d in rows]
    final.append(rows[-1][0])
    for t in watchers:
        t.join(timeout=60)
    assert len(expected) > 100, len(expected)
    current = {i["metadata"]["name"]: i["data"]["n"] for i in own(watch_api.get(cm_path(watch_ns)).json()["items"])}
    for i, events in results.items():
        got = [(e["type"], e["object"]["metadata"]["name"], int(e["object"]["metadata"]["resourceVersion"]),
                e["object"]["data"]["n"]) for e in events if e["type"] != "BOOKMARK"]
        assert got == expected, f"watcher {i}: {len(got)} events vs {len(expected)} in the log"
        state: dict = {}
        for t_, name, _v, n in got:
            if t_ == "DELETED":
                state.pop(name)
            else:
                state[name] = n
        assert state == current
