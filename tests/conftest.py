"""Shared fixtures: a real kapi server (``kapi_server``) and clients for it.

``kapi_server`` is started once per session with ``manage.py serve`` on a free
port and a temporary data directory (embedded PostgreSQL and Redis), exactly as
a user would run it. It yields a :class:`kapi_testserver.KapiServer`: ``url``,
``data_dir``, ``kubeconfig_path``, ``token``, ``ca_path`` and
``kubectl(*args, input=None, check=True)``. At the end of the session it is
stopped with SIGTERM, and the session fails if it does not exit cleanly within
15 s or leaves any process behind.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from kapi_testserver import (
    KapiServer,
    new_data_dir,
    remove_data_dir,
    serving,
)


@pytest.fixture(scope="session")
def kapi_server() -> Iterator[KapiServer]:
    # Alerts may post to the tests' receivers on loopback (refused by default).
    yield from serving({**os.environ, "KAPI_ALERT_ALLOWED_NETWORKS": "127.0.0.0/8"})


@pytest.fixture
def fresh_data_dir() -> Iterator[Path]:
    """A data directory for a test that runs its own server; removed afterwards."""
    data_dir = new_data_dir()
    try:
        yield data_dir
    finally:
        remove_data_dir(data_dir)


@pytest.fixture(scope="session")
def k8s_api_client(kapi_server: KapiServer) -> Iterator[object]:
    """A ``kubernetes.client.ApiClient`` configured from the server's kubeconfig."""
    from kubernetes import config

    client = config.new_client_from_config(config_file=str(kapi_server.kubeconfig_path))
    try:
        yield client
    finally:
        client.close()
