"""Fixtures for the workload controllers: raw HTTP, the Python client, a fresh
namespace, waiting, and small object builders."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.api.conftest import API
from tests.lifecycle.conftest import wait_for

__all__ = ["container", "pod_template", "wait_for"]


@pytest.fixture(scope="session")
def api(kapi_server) -> API:
    return API(kapi_server)


@pytest.fixture
def namespace(api: API) -> Iterator[str]:
    name = f"wl-{uuid.uuid4().hex[:10]}"
    response = api.post("/api/v1/namespaces", {"metadata": {"name": name}})
    assert response.status_code == 201, response.text
    yield name
    api.delete(f"/api/v1/namespaces/{name}")


def container(image: str = "nginx:1.25") -> dict:
    return {"name": "c", "image": image}


def pod_template(labels: dict, image: str = "nginx:1.25") -> dict:
    return {"metadata": {"labels": labels}, "spec": {"containers": [container(image)]}}
