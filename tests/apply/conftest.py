"""Helpers for the apply/patch integration tests: a raw HTTP session on the
session's ``kapi_server`` and unique object names."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest
import requests


class API:
    def __init__(self, server) -> None:
        self.base = server.url.rstrip("/")
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {server.token}"
        self.session.trust_env = False
        self.session.verify = str(server.ca_path)

    def request(
        self,
        method: str,
        path: str,
        body=None,
        content_type: str = "application/json",
        **kw,
    ):
        headers = kw.pop("headers", {})
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
            headers["Content-Type"] = content_type
        return self.session.request(
            method, self.base + path, data=data, headers=headers, timeout=30, **kw
        )

    def cm_path(self, name: str = "", ns: str = "default") -> str:
        return f"/api/v1/namespaces/{ns}/configmaps" + (f"/{name}" if name else "")

    def create_cm(self, name: str, data: dict | None = None, **params) -> dict:
        body = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": name},
            "data": data or {"a": "1"},
        }
        response = self.request("POST", self.cm_path(), body, params=params)
        assert response.status_code == 201, response.text
        return response.json()

    def apply(self, name: str, body: dict | str, manager: str = "test", **params):
        params = {"fieldManager": manager, **params} if manager else params
        return self.request(
            "PATCH",
            self.cm_path(name),
            body,
            content_type="application/apply-patch+yaml",
            params=params,
        )


@pytest.fixture(scope="session")
def api(kapi_server) -> Iterator[API]:
    client = API(kapi_server)
    yield client
    client.session.close()


@pytest.fixture
def name() -> str:
    return "t-" + uuid.uuid4().hex[:10]


def configmap(name: str, data: dict, **meta) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, **meta},
        "data": data,
    }
