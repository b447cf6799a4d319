"""kill -9 of an API server process while 8 clients write.

Every write acknowledged with a 2xx is stored and in the change log, nothing is
half-written, resourceVersions are unique and ordered, and watchers on another
API process see every acknowledged write exactly once."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import uuid

import psycopg
import requests
from kapi_testserver import KapiServer

from tests.api.conftest import ROOT_CA
from tests.faults.conftest import (
    Client,
    api_workers,
    client,
    database_url,
    figure,
)

WRITERS = 8
LOAD_SECONDS = 3.0


def _watch(other: Client, ns: str, since: str, seen: list, stop: threading.Event) -> None:
    with other.request(
        "GET", f"/api/v1/namespaces/{ns}/configmaps",
        params={"watch": "1", "resourceVersion": since, "timeoutSeconds": "60"},
        stream=True, timeout=70,
    ) as response:
        for line in response.iter_lines():
            if line:
                seen.append(json.loads(line))
            if stop.is_set():
                return


def _writer(server: KapiServer, ns: str, i: int, stop: threading.Event, acked: list,
            failures: list) -> None:
    api = client(server)
    n = 0
    while not stop.is_set():
        name = f"w{i}-{n}"
        n += 1
        body = {"metadata": {"name": name}, "data": {"writer": str(i)}}
        try:
            r = api.request("POST", f"/api/v1/namespaces/{ns}/configmaps", json=body)
        except requests.RequestException:
            failures.append(name)  # not acknowledged: may or may not have landed
            api = client(server)
            continue
        if r.status_code == 201:
            acked.append((name, int(r.json()["metadata"]["resourceVersion"])))
        else:
            assert r.status_code in (429, 500, 503), r.text
            failures.append(name)


def test_kill_api_process_under_write_load(fault_server: KapiServer, other_process: Client):
    api = client(fault_server)
    ns = f"kill-{uuid.uuid4().hex[:6]}"
    assert api.request("POST", "/api/v1/namespaces", json={"metadata": {"name": ns}}).ok
    start_rv = api.request("GET", f"/api/v1/namespaces/{ns}/configmaps").json()[
        "metadata"]["resourceVersion"]
    stop_watch = threading.Event()
    watchers = [[] for _ in range(2)]
    watch_threads = [
        threading.Thread(target=_watch, args=(other_process, ns, start_rv, seen, stop_watch),
                         daemon=True)
        for seen in watchers
    ]
    for t in watch_threads:
        t.start()
    stop = threading.Event()
    acked: list[tuple[str, int]] = []
    failures: list[str] = []
    writers = [
        threading.Thread(target=_writer, args=(fault_server, ns, i, stop, acked, failures),
                         daemon=True)
        for i in range(WRITERS)
    ]
    for t in writers:
        t.start()
    time.sleep(LOAD_SECONDS / 3)
    victim = api_workers(fault_server)[0]
    os.kill(victim.pid, signal.SIGKILL)
    killed_at = time.monotonic()
    acked_at_kill = len(acked)
    time.sleep(LOAD_SECONDS * 2 / 3)
    stop.set()
    for t in writers:
        t.join(30)
    # Recovery: uvicorn replaces the worker; both processes answer again.
    recovered = None
    while recovered is None:
        pids = {p.pid for p in api_workers(fault_server)}
        if victim.pid not in pids and len(pids) == 2:
            recovered = time.monotonic() - killed_at
        assert time.monotonic() - killed_at < 60, "worker not replaced"
        time.sleep(0.1)
    assert len(acked) > acked_at_kill, "no write acknowledged after the kill"

    # The writers' objects: not the root-CA publisher's ConfigMap, which may
    # have landed before the watchers' start.
    with psycopg.connect(database_url(fault_server), autocommit=True) as db:
        objects = dict(db.execute(
            "SELECT name, resource_version FROM kapi_object"
            " WHERE resource = 'configmaps' AND namespace = %s AND name <> %s", [ns, ROOT_CA]).fetchall())
        changes = db.execute(
            "SELECT name, resource_version, type FROM kapi_change"
            " WHERE resource = 'configmaps' AND namespace = %s AND name <> %s ORDER BY resource_version",
            [ns, ROOT_CA]).fetchall()
    lost = [name for name, rv in acked if objects.get(name) != rv]
    assert not lost, f"acknowledged writes lost: {lost[:5]}"
    # Nothing half-written: every stored object has exactly its ADDED change.
    assert sorted((n, rv) for n, rv, t in changes if t == "ADDED") == sorted(objects.items())
    rvs = [rv for _, rv in acked]
    assert len(set(rvs)) == len(rvs), "resourceVersions reused"
    per_writer: dict[str, list[int]] = {}
    for name, rv in acked:
        per_writer.setdefault(name.split("-")[0], []).append(rv)
    for seq in per_writer.values():
        assert seq == sorted(seq), "a client's later write got an earlier resourceVersion"

    # Watchers on the other process: every stored write exactly once, in order.
    deadline = time.monotonic() + 15
    expected = sorted(objects.values())
    missed = []
    while time.monotonic() < deadline:
        missed = [
            [rv for rv in expected if rv not in {
                int(e["object"]["metadata"]["resourceVersion"]) for e in seen
                if e["type"] == "ADDED"}]
            for seen in watchers
        ]
        if not any(missed):
            break
        time.sleep(0.2)
    stop_watch.set()
    for seen, miss in zip(watchers, missed, strict=True):
        added = [int(e["object"]["metadata"]["resourceVersion"]) for e in seen
                 if e["type"] == "ADDED"]
        assert not miss, f"watcher missed {len(miss)} events"
        assert added == sorted(set(added)), "duplicate or out-of-order events"
        assert set(added) >= set(rvs)
    figure("api_kill", writes_acked=len(acked), writes_unacked=len(failures),
           acknowledged_writes_lost=len(lost), recover_seconds=round(recovered, 2),
           events_missed=sum(len(m) for m in missed))
