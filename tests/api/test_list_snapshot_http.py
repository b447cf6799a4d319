"""Consistent and paged lists served from each API process's cache: a
consistent list shows every write made before it, whichever process serves it;
a paged list is the collection at its first page's resourceVersion however
many writes come between its pages and whichever process serves each page
(from its snapshot, or from PostgreSQL), equal to PostgreSQL's list at that
revision, in every encoding clients page with."""

from __future__ import annotations

import re

import requests
import yaml

from tests.api.conftest import ROOT_CA, own
from tests.api.test_list_http import make, names


def _rv(obj) -> int:
    return int(obj["metadata"]["resourceVersion"])


def fresh_get(api, path, **params) -> requests.Response:
    """A GET on a new connection: the kernel spreads connections over the API
    processes (one listening socket each), so successive calls reach both."""
    return requests.get(
        api.server.url + path, params=params, timeout=30, verify=str(api.server.ca_path),
        headers={"Authorization": f"Bearer {api.server.token}", "Connection": "close"},
    )


def consistent_reads(api, fallback: str, resource: str = "configmaps") -> float:
    """apiserver_watch_cache_consistent_read_total of ``resource``, summed over processes."""
    text = api.get("/metrics").text
    pattern = re.compile(
        r'^apiserver_watch_cache_consistent_read_total\{(?=[^}]*fallback="' + fallback
        + r'")(?=[^}]*resource="' + resource + r'")[^}]*\} (\S+)$', re.M,
    )
    return sum(float(v) for v in pattern.findall(text))


def database_list(api, path, revision: int, **params) -> dict:
    """The list as PostgreSQL has it at ``revision`` (an unpaged Exact list reads the database)."""
    r = api.get(path, params={"resourceVersion": str(revision), "resourceVersionMatch": "Exact", **params})
    assert r.status_code == 200, r.text
    return r.json()


def walk(api, path, first: requests.Response, between=None, **params) -> tuple[list[dict], list]:
    """Every page from ``first`` on (each on a new connection), calling
    ``between(i)`` before each; the items and each page's remainingItemCount."""
    assert first.status_code == 200, first.text
    body = first.json()
    revision = body["metadata"]["resourceVersion"]
    items, remaining = list(body["items"]), [body["metadata"].get("remainingItemCount")]
    token, i = body["metadata"].get("continue"), 0
    while token:
        if between:
            between(i)
        i += 1
        page = fresh_get(api, path, **params, **{"continue": token})
        assert page.status_code == 200, page.text
        meta = page.json()["metadata"]
        assert meta["resourceVersion"] == revision
        items += page.json()["items"]
        remaining.append(meta.get("remainingItemCount"))
        token = meta.get("continue")
    return items, remaining


def test_a_consistent_list_shows_the_write_just_made_on_either_process(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    fresh_get(api, base)  # the caches of resource configmaps exist from here on
    from_cache = consistent_reads(api, "false")
    expected = []
    for i in range(12):
        created = make(api, namespace, f"c{i:02d}", data={"k": str(i)})
        expected.append(f"c{i:02d}")
        if i % 3 == 2:  # an update and a delete must show as well
            patched = api.request("PATCH", f"{base}/c{i - 1:02d}", data='{"data":{"k":"new"}}',
                                  headers={"Content-Type": "application/merge-patch+json"})
            assert patched.status_code == 200, patched.text
            assert api.delete(f"{base}/c{i - 2:02d}").status_code == 200
            expected.remove(f"c{i - 2:02d}")
            created = patched.json()
        r = fresh_get(api, base)
        assert names(r) == expected
        assert int(r.json()["metadata"]["resourceVersion"]) >= _rv(created)
        if i % 3 == 2:
            assert {o["metadata"]["name"]: o["data"]["k"] for o in own(r.json()["items"])}[f"c{i - 1:02d}"] == "new"
    assert consistent_reads(api, "false") > from_cache


def test_a_paged_list_across_writes_is_the_collection_at_its_revision(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    for i in range(30):
        make(api, namespace, f"p{i:02d}", {"n": str(i % 4)}, data={"k": str(i)})

    writes = iter(range(8))

    def write(_page):
        k = next(writes)
        make(api, namespace, f"p{k:02d}x", data={"k": "late"})  # sorts among the pages to come
        patched = api.request("PATCH", f"{base}/p{k:02d}", data='{"data":{"k":"late"}}',
                              headers={"Content-Type": "application/merge-patch+json"})
        assert patched.status_code == 200, patched.text
        assert api.delete(f"{base}/p{29 - k:02d}").status_code == 200

    for params in ({}, {"resourceVersion": "0"}):
        first = fresh_get(api, base, limit="7", **params)
        revision = _rv(first.json())
        items, remaining = walk(api, base, first, write, limit="7")
        expected = database_list(api, base, revision)["items"]
        assert items == expected
        assert items != fresh_get(api, base).json()["items"]  # the writes did happen
        assert len({o["metadata"]["name"] for o in items}) == len(items)
        assert remaining == [len(expected) - 7 * k for k in range(1, len(remaining))] + [None]


def test_selectors_on_cached_pages_equal_postgresql(api, namespace):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    for i in range(20):
        make(api, namespace, f"s{i:02d}", {"n": str(i % 4), **({"odd": "yes"} if i % 2 else {})})
    for selector in ({"labelSelector": "n=1"}, {"labelSelector": "n notin (1,2),!odd"},
                     {"labelSelector": "n>1"}, {"fieldSelector": "metadata.name!=s03"}):
        for limit in ({}, {"limit": "3"}):
            first = fresh_get(api, base, resourceVersion="0", **selector, **limit)
            revision = _rv(first.json())
            items, remaining = walk(api, base, first, **selector, **limit)
            assert items == database_list(api, base, revision, **selector)["items"], selector
            assert set(remaining) == {None}  # kube counts only unselected lists


def test_pages_in_table_yaml_and_with_kubectl_chunks(api, namespace, kapi_server):
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    for i in range(5):
        make(api, namespace, f"t{i}")
    table = api.get(base, params={"limit": "2"}, headers={"Accept": "application/json;as=Table;g=meta.k8s.io;v=v1"})
    assert table.status_code == 200, table.text
    # Six objects: the five and the root-CA publisher's ConfigMap (first in
    # name order).
    assert table.json()["kind"] == "Table" and [row["cells"][0] for row in table.json()["rows"]] == [ROOT_CA, "t0"]
    assert table.json()["metadata"]["continue"] and table.json()["metadata"]["remainingItemCount"] == 4
    page = api.get(base, params={"limit": "2", "continue": table.json()["metadata"]["continue"]},
                   headers={"Accept": "application/yaml"})
    assert page.status_code == 200 and page.headers["Content-Type"].startswith("application/yaml")
    assert [o["metadata"]["name"] for o in yaml.safe_load(page.text)["items"]] == ["t1", "t2"]
    out = kapi_server.kubectl("get", "configmaps", "-n", namespace, "--chunk-size=2", "-o", "name").stdout
    assert out.split() == [f"configmap/{ROOT_CA}"] + [f"configmap/t{i}" for i in range(5)]
