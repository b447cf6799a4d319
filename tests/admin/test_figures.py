"""Figures: render times of the admin pages at scale (Django test client, PostgreSQL).

100,000 ConfigMaps of one kind: the first page of the list, a page deep in it
(keyset, after the 90,000th), the list sorted by change, searched by name and
filtered by labels; and the object page of an object with 50 history entries.
The medians go to ``test-artifacts/admin/figures.json``; the bounds asserted
are loose, the figures are the point.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import pytest
from django.db import connection

from kapi.admin.queries import encode_cursor
from tests.admin.helpers import configmap, rt

pytestmark = pytest.mark.django_db

N = 100_000
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "admin"

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


def _median_ms(client, url: str, runs: int = 5) -> float:
    client.get(url)  # warm caches
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200
    return round(statistics.median(times), 1)


def test_render_times(client, superuser, registry):
    with connection.cursor() as cur:
        cur.execute(_FILL, [N])
        cur.execute("ANALYZE kapi_object")
    cm = rt("configmaps")
    configmap(registry, "storied", namespace="default")
    for i in range(49):
        registry.update_with(cm, "default", "storied", lambda o, i=i: {**o, "data": {"k": str(i)}})
    client.force_login(superuser)
    base = "/admin/kapi/core/v1/configmaps/"
    deep = encode_cursor(("bench", "cm-090000"))
    figures = {
        "objects": N,
        "list_first_page_ms": _median_ms(client, base + "?namespace=bench"),
        "list_first_page_all_namespaces_ms": _median_ms(client, base),
        "list_deep_page_ms": _median_ms(client, base + f"?namespace=bench&after={deep}"),
        "list_sorted_by_change_deep_ms": _median_ms(
            client, base + f"?namespace=bench&sort=-updated&after={encode_cursor((N // 10,))}"
        ),
        "list_name_search_ms": _median_ms(client, base + "?q=cm-09999"),
        "list_label_selector_ms": _median_ms(client, base + "?labels=app%3Da3"),
        "object_page_50_history_ms": _median_ms(client, base + "default/storied/"),
        "history_diff_page_ms": _median_ms(client, base + "default/storied/history/"),
    }
    page = client.get(base + "default/storied/").content.decode()
    assert "History (50 in the change log)" in page
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "figures.json").write_text(json.dumps(figures, indent=2) + "\n")
    print("\nadmin figures:", json.dumps(figures, indent=2))
    for key, value in figures.items():
        if key.endswith("_ms"):
            assert value < 2000, (key, value)
