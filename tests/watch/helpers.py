"""Writes and checks shared by the watch tests."""

from __future__ import annotations

import time

from tests.api.conftest import ROOT_CA, own

__all__ = ["ROOT_CA", "cm_path", "create", "delete", "own", "rv", "summary", "update", "wait_compacted"]


def cm_path(ns: str, name: str = "") -> str:
    return f"/api/v1/namespaces/{ns}/configmaps" + (f"/{name}" if name else "")


def create(api, ns: str, name: str, labels: dict | None = None, data: dict | None = None) -> dict:
    body = {"metadata": {"name": name, "labels": labels or {}}, "data": data or {"k": "0"}}
    r = api.post(cm_path(ns), body)
    assert r.status_code == 201, r.text
    return r.json()


def update(api, ns: str, name: str, labels: dict | None = None, data: dict | None = None) -> dict:
    obj = api.get(cm_path(ns, name)).json()
    if labels is not None:
        obj["metadata"]["labels"] = labels
    if data is not None:
        obj["data"] = data
    r = api.put(cm_path(ns, name), obj)
    assert r.status_code == 200, r.text
    return r.json()


def delete(api, ns: str, name: str) -> None:
    r = api.delete(cm_path(ns, name))
    assert r.status_code == 200, r.text


def rv(obj: dict) -> int:
    return int(obj["metadata"]["resourceVersion"])


def summary(events: list[dict]) -> list[tuple[str, str, int]]:
    """(type, name, resourceVersion) of each non-bookmark event."""
    return [
        (e["type"], e["object"]["metadata"].get("name", ""), int(e["object"]["metadata"]["resourceVersion"]))
        for e in events
        if e["type"] != "BOOKMARK"
    ]


def wait_compacted(db, revision: int, timeout: float = 90) -> int:
    """Wait until the change log is compacted past ``revision``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        (compacted,) = db.execute("SELECT revision FROM kapi_compaction WHERE id = 1").fetchone()
        if compacted > revision:
            return compacted
        time.sleep(0.5)
    raise AssertionError(f"not compacted past {revision} within {timeout}s")
