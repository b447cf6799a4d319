"""Django in this process on a real ``serve``'s migrated PostgreSQL: for the
benchmarks that time admin pages with Django's test client."""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _load import ROOT

__all__ = ["median_ms", "on_served_database"]


def on_served_database(measure: Callable[[], object]) -> object:
    """Start a ``serve`` on a temporary data directory, set Django up in this
    process against its database, run ``measure()`` and stop the server."""
    sys.path.insert(0, str(ROOT))
    from kapi_testserver import start_server, stop_server

    with tempfile.TemporaryDirectory(prefix="kapi-bench-") as tmp:
        data = Path(tmp) / "data"
        srv = start_server(data)
        try:
            from kapi.runtime.config import _embedded_postgres_url

            os.environ["DATABASE_URL"] = _embedded_postgres_url(data / "postgres")
            os.environ["KAPI_DATA_DIR"] = str(data)
            os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
            import django

            django.setup()
            return measure()
        finally:
            stop_server(srv)


def median_ms(client, url: str, runs: int, must: str = "") -> float:
    """The median time of ``runs`` GETs of ``url`` after one that warms the
    caches (and must answer 200 with ``must`` in the page)."""
    first = client.get(url)
    assert first.status_code == 200 and must in first.content.decode(), (url, first.status_code)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    return round(statistics.median(times), 1)
