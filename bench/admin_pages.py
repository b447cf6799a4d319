"""Issue #8's figures: render times of the admin pages at scale.

Starts a real ``serve`` (for its migrated PostgreSQL), fills it with 100,000
ConfigMaps of one kind in one statement, and times with Django's test client,
in process against that database: the first page of the list, a page deep in
it (keyset, after the 90,000th), the list sorted by change, searched by name
and filtered by labels, and the object page of an object with 50 history
entries. Prints the medians.

    python bench/admin_pages.py [--objects 100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _load import ROOT

sys.path.insert(0, str(ROOT))

_FILL = """
WITH g AS (
  SELECT i, 'cm-' || lpad(i::text, 6, '0') AS name, gen_random_uuid() AS uid,
         jsonb_build_object('app', 'a' || (i %% 10)) AS labels
  FROM generate_series(1, %s) AS i
)
INSERT INTO kapi_object ("group", resource, namespace, name, uid, resource_version, data, labels)
SELECT '', 'configmaps', 'bench', name, uid, nextval('kapi_resource_version'),
       jsonb_build_object(
         'apiVersion', 'v1', 'kind', 'ConfigMap',
         'metadata', jsonb_build_object('name', name, 'namespace', 'bench', 'uid', uid,
                                        'creationTimestamp', '2024-01-01T00:00:00Z',
                                        'labels', labels),
         'data', jsonb_build_object('k', 'value-' || i)),
       labels
FROM g
"""


def _median_ms(client, url: str, runs: int) -> float:
    assert client.get(url).status_code == 200  # warm caches
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    return round(statistics.median(times), 1)


def measure(objects: int, runs: int) -> dict:
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    from kapi.admin.queries import encode_cursor
    from kapi.registry.catalog import catalog
    from kapi.registry.store import Registry

    with connection.cursor() as cur:
        cur.execute(_FILL, [objects])
        cur.execute("ANALYZE kapi_object")
    registry = Registry()
    cm = catalog().lookup("", "v1", "configmaps")
    registry.create(
        cm, "default",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "storied"}, "data": {"k": "v"}},
    )
    for i in range(49):
        registry.update_with(cm, "default", "storied", lambda o, i=i: {**o, "data": {"k": str(i)}})
    user = get_user_model().objects.create_superuser("bench-root", password="unused-pw")
    client = Client()
    client.force_login(user)
    base = "/admin/kapi/core/v1/configmaps/"
    deep = encode_cursor(("bench", f"cm-{objects * 9 // 10:06d}"))
    figures = {
        "objects": objects,
        "list_first_page_ms": _median_ms(client, base + "?namespace=bench", runs),
        "list_first_page_all_namespaces_ms": _median_ms(client, base, runs),
        "list_deep_page_ms": _median_ms(client, base + f"?namespace=bench&after={deep}", runs),
        "list_sorted_by_change_deep_ms": _median_ms(
            client, base + f"?namespace=bench&sort=-updated&after={encode_cursor((objects // 10,))}", runs
        ),
        "list_name_search_ms": _median_ms(client, base + "?q=cm-09999", runs),
        "list_label_selector_ms": _median_ms(client, base + "?labels=app%3Da3", runs),
        "object_page_50_history_ms": _median_ms(client, base + "default/storied/", runs),
        "history_diff_page_ms": _median_ms(client, base + "default/storied/history/", runs),
    }
    page = client.get(base + "default/storied/").content.decode()
    assert "History (50 in the change log)" in page
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

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
            print(json.dumps(measure(args.objects, args.runs), indent=2))
        finally:
            stop_server(srv)


if __name__ == "__main__":
    main()
