"""Fixtures for API tests: a raw HTTP session and a fresh namespace per test."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
import requests


class API:
    """A thin ``requests`` wrapper that knows the server URL, token and CA."""

    def __init__(self, server) -> None:
        self.server = server
        self.session = requests.Session()
        # REQUESTS_CA_BUNDLE in the environment would override session.verify.
        self.session.trust_env = False
        self.session.verify = str(server.ca_path)
        self.session.headers["Authorization"] = f"Bearer {server.token}"

    def request(self, method: str, path: str, **kwargs) -> requests.Response:
        return self.session.request(method, self.server.url + path, timeout=30, **kwargs)

    def get(self, path: str, **kwargs) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, body=None, **kwargs) -> requests.Response:
        return self.request("POST", path, json=body, **kwargs)

    def put(self, path: str, body=None, **kwargs) -> requests.Response:
        return self.request("PUT", path, json=body, **kwargs)

    def delete(self, path: str, **kwargs) -> requests.Response:
        return self.request("DELETE", path, **kwargs)


@pytest.fixture(scope="session")
def api(kapi_server) -> API:
    return API(kapi_server)


#: The ConfigMap kube-controller-manager's root-CA publisher keeps in every
#: namespace (kapi/controlplane/): not the tests' own.
ROOT_CA = "kube-root-ca.crt"


def own(items: list[dict]) -> list[dict]:
    """A list's items without the root-CA publisher's ConfigMap."""
    return [i for i in items if i["metadata"]["name"] != ROOT_CA]


def wait_for_root_ca(api: API, namespace: str, timeout: float = 30) -> None:
    """Wait until the root-CA publisher's ConfigMap is in ``namespace``, so
    that a test's lists and watches see it always (or, after, never)."""
    deadline = time.monotonic() + timeout
    while api.get(f"/api/v1/namespaces/{namespace}/configmaps/{ROOT_CA}").status_code != 200:
        assert time.monotonic() < deadline, f"no {ROOT_CA} in {namespace}"
        time.sleep(0.02)


@pytest.fixture
def namespace(api: API) -> Iterator[str]:
    """A new namespace for one test, its root-CA ConfigMap already there."""
    name = f"t-{uuid.uuid4().hex[:10]}"
    response = api.post("/api/v1/namespaces", {"metadata": {"name": name}})
    assert response.status_code == 201, response.text
    wait_for_root_ca(api, name)
    yield name
    api.delete(f"/api/v1/namespaces/{name}")


def assert_status(response: requests.Response, code: int, reason: str) -> dict:
    """The response is a Kubernetes Status failure with this code and reason."""
    assert response.status_code == code, response.text
    assert response.headers["Content-Type"].startswith("application/json"), response.headers
    status = response.json()
    assert status["kind"] == "Status"
    assert status["apiVersion"] == "v1"
    assert status["status"] == "Failure"
    assert status["code"] == code
    assert status["reason"] == reason
    assert status["message"]
    return status
