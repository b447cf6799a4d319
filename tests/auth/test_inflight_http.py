"""The per-user in-flight limit against a real server started with
``KAPI_MAX_INFLIGHT_PER_USER=2`` and one API process: one user's parallel slow
lists get 429 with ``Retry-After`` and kube's ``Status`` (TooManyRequests) while
another user is served; watches, long-running in kube, are neither counted nor
refused."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from kapi_testserver import (
    KapiServer,
    serving,
)
from user_kubeconfigs import user_token

LIMIT = 2
NS = "default"


@pytest.fixture(scope="module")
def limited_server() -> Iterator[KapiServer]:
    env = {**os.environ, "KAPI_MAX_INFLIGHT_PER_USER": str(LIMIT)}
    yield from serving(env, ("--workers", "1"))


def _session(server: KapiServer, token: str) -> requests.Session:
    session = requests.Session()
    session.trust_env = False
    session.verify = str(server.ca_path)
    session.headers["Authorization"] = f"Bearer {token}"
    return session


@pytest.fixture(scope="module")
def slow_list_path(limited_server: KapiServer) -> str:
    """ConfigMaps big enough that listing them all takes a while."""
    admin = _session(limited_server, limited_server.token)
    blob = "x" * 400_000
    for i in range(30):
        r = admin.post(
            f"{limited_server.url}/api/v1/namespaces/{NS}/configmaps",
            json={
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"big-{i}"},
                "data": {"blob": blob},
            },
            timeout=60,
        )
        assert r.status_code == 201, r.text
    return f"/api/v1/namespaces/{NS}/configmaps"


def test_one_user_over_the_limit_gets_429_others_are_served(
    limited_server: KapiServer, slow_list_path: str
) -> None:
    noisy = _session(limited_server, limited_server.token)
    other_token = user_token(limited_server, "patient")
    admin = _session(limited_server, limited_server.token)
    r = admin.post(
        f"{limited_server.url}/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        json={
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "patient-view"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "view",
            },
            "subjects": [{"kind": "User", "name": "patient"}],
        },
        timeout=30,
    )
    assert r.status_code == 201, r.text
    other = _session(limited_server, other_token)
    url = limited_server.url + slow_list_path

    stop = threading.Event()
    refused: list[requests.Response] = []
    served = 0
    lock = threading.Lock()

    def hammer() -> None:
        nonlocal served
        while not stop.is_set():
            resp = noisy.get(url, timeout=120)
            with lock:
                if resp.status_code == 429:
                    refused.append(resp)
                else:
                    assert resp.status_code == 200, resp.text
                    served += 1

    with ThreadPoolExecutor(8) as pool:
        futures = [pool.submit(hammer) for _ in range(8)]
        try:
            other_codes = []
            watch_codes = []
            for _ in range(60):
                other_codes.append(other.get(url, timeout=120).status_code)
                # A watch from the saturated user is long-running: not refused.
                with noisy.get(
                    f"{url}?watch=1&timeoutSeconds=1", stream=True, timeout=60
                ) as watch:
                    watch_codes.append(watch.status_code)
                if len(refused) >= 3 and len(other_codes) >= 3:
                    break
        finally:
            stop.set()
        for f in futures:
            f.result()

    assert refused, "the noisy user was never refused"
    assert served >= 1
    assert set(other_codes) == {200}, other_codes
    assert set(watch_codes) == {200}, watch_codes
    response = refused[0]
    assert response.headers["Retry-After"] == "1"
    status = response.json()
    assert status["kind"] == "Status" and status["apiVersion"] == "v1"
    assert status["status"] == "Failure"
    assert status["reason"] == "TooManyRequests"
    assert status["code"] == 429
    assert status["details"]["retryAfterSeconds"] == 1

    # Once the burst is over the slots are all given back.
    assert noisy.get(url, timeout=120).status_code == 200


def test_watches_are_not_counted(limited_server: KapiServer) -> None:
    """More open watches than the limit, and the same user is still served."""
    session = _session(limited_server, limited_server.token)
    base = f"{limited_server.url}/api/v1/namespaces/{NS}/secrets"
    watches = [
        session.get(f"{base}?watch=1&timeoutSeconds=30", stream=True, timeout=60)
        for _ in range(LIMIT + 2)
    ]
    try:
        assert [w.status_code for w in watches] == [200] * (LIMIT + 2)
        for _ in range(3):
            assert session.get(base, timeout=30).status_code == 200
    finally:
        for w in watches:
            w.close()
