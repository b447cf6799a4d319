"""The sync tests' server with short or long timers: the files that need one
share it (the ``SYNC_TIMERS`` group of tests/groups.py), so a worker starts it
once.

Each setting is for one file and changes nothing the others rely on: kustomize
remote bases allowed (``test_stage_timeouts``: a remote base that never
answers), the health poll an hour (``test_health_wake``: only a status write
can wake a waiting Sync), the retention sweep every second
(``test_retention``)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from kapi_testserver import KapiServer, serving


@pytest.fixture(scope="session")
def timers_server() -> Iterator[KapiServer]:
    yield from serving({
        **os.environ,
        "KAPI_SYNC_KUSTOMIZE_REMOTE": "1",
        "KAPI_SYNC_HEALTH_POLL_SECONDS": "3600",
        "KAPI_GIT_RETENTION_SWEEP_SECONDS": "1",
    })
