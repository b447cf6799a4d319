"""Fixtures for ResourceQuota tests: raw HTTP against the session server."""

from __future__ import annotations

import pytest
import user_kubeconfigs

from tests.api.conftest import API, api, namespace  # noqa: F401 - fixtures
from tests.lifecycle.conftest import wait_for

__all__ = ["quota", "used_of", "wait_used"]


@pytest.fixture(scope="session")
def user_token(kapi_server):
    def make(name: str) -> str:
        return user_kubeconfigs.user_token(kapi_server, name)

    return make


def quota(name: str, hard: dict, **spec) -> dict:
    return {"metadata": {"name": name}, "spec": {"hard": hard, **spec}}


def used_of(client: API, ns: str, name: str) -> dict:
    response = client.get(f"/api/v1/namespaces/{ns}/resourcequotas/{name}")
    assert response.status_code == 200, response.text
    return (response.json().get("status") or {}).get("used") or {}


def wait_used(client: API, ns: str, name: str, expected: dict) -> dict:
    """Wait until ``status.used`` has every entry of ``expected`` (exact strings)."""
    def reached():
        used = used_of(client, ns, name)
        return used if all(used.get(k) == v for k, v in expected.items()) else None

    return wait_for(reached, timeout=20, interval=0.05, what=f"{name} used {expected}")
