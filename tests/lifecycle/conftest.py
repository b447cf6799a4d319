"""Fixtures for the deletion lifecycle: raw HTTP, a fresh namespace, waiting."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from tests.api.conftest import API


@pytest.fixture(scope="session")
def api(kapi_server) -> API:
    return API(kapi_server)


@pytest.fixture
def namespace(api: API) -> Iterator[str]:
    name = f"lc-{uuid.uuid4().hex[:10]}"
    response = api.post("/api/v1/namespaces", {"metadata": {"name": name}})
    assert response.status_code == 201, response.text
    yield name
    api.delete(f"/api/v1/namespaces/{name}")


def wait_for(predicate, timeout: float = 30.0, interval: float = 0.1, what: str = "condition"):
    """Poll ``predicate`` until it returns something truthy; return that."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def gone(api: API, path: str) -> bool:
    return api.get(path).status_code == 404


def cm(name: str, *, owners: list[dict] | None = None, finalizers: list[str] | None = None,
       labels: dict | None = None) -> dict:
    meta: dict = {"name": name}
    if owners:
        meta["ownerReferences"] = owners
    if finalizers:
        meta["finalizers"] = finalizers
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {"k": "v"}}


def owner_ref(obj: dict, block: bool = False) -> dict:
    ref = {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
    }
    if block:
        ref["blockOwnerDeletion"] = True
    return ref
