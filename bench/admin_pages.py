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

from _inproc import median_ms as _median_ms
from _inproc import on_served_database

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

    print(json.dumps(on_served_database(lambda: measure(args.objects, args.runs)), indent=2))

if __name__ == "__main__":
    main()
