"""Metric series of deleted objects leave ``/metrics``, as Flux deletes them.

A Sync and its GitRepository get their ``gotk_*`` series once reconciled;
once both are deleted, no series names them any more (``DeleteCondition``,
``DeleteSuspend``, ``DeleteDuration`` in ``fluxcd/pkg/runtime/metrics``), so
the scrape does not grow with every object ever created.
"""

from __future__ import annotations

from sync_gitops import Work, create, sync_namespace, unique, wait_for

API = "sync.kapi.dev/v1"


def _series(server, ns: str) -> list[str]:
    text = server.kubectl("get", "--raw", "/metrics").stdout
    return [line for line in text.splitlines()
            if line.startswith("gotk_") and f'namespace="{ns}"' in line]


def test_gotk_series_of_deleted_objects_disappear(kapi_server, tmp_path):
    """Reconciled: condition, suspend and duration series name the Sync and the
    GitRepository. Deleted: none of them is scraped any more, while the series
    of another, living Sync stay."""
    ns = unique("series")
    create(kapi_server, *sync_namespace(ns))
    for name in ("gone", "kept"):
        create(
            kapi_server,
            {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": name, "namespace": ns},
             "spec": {}},
            {"apiVersion": API, "kind": "Sync", "metadata": {"name": name, "namespace": ns},
             "spec": {"sourceRef": {"name": name}, "path": "./deploy"}},
        )
        work = Work(kapi_server, ns, name, tmp_path / name)
        work.write("deploy/cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap",
                                      "metadata": {"name": f"cm-{name}"}, "data": {"a": "b"}})
        work.push("one")

    def both_reported():
        lines = _series(kapi_server, ns)
        wanted = [f'kind="{kind}",name="{name}"' for kind in ("Sync", "GitRepository")
                  for name in ("gone", "kept")]
        ok = all(any(w in line and "gotk_reconcile_duration_seconds_count" in line for line in lines)
                 for w in wanted)
        return lines if ok else None

    wait_for(both_reported, timeout=60, what="gotk series of both Syncs")
    kapi_server.kubectl("delete", "sync,gitrepository", "gone", "-n", ns)

    def gone():
        done = kapi_server.kubectl("get", "gitrepository", "gone", "-n", ns, "-o", "json", check=False)
        return done.returncode != 0

    wait_for(gone, timeout=60, what="the GitRepository to be deleted")
    lines = _series(kapi_server, ns)
    assert [line for line in lines if 'name="gone"' in line] == []
    kept = [line for line in lines if 'name="kept"' in line]
    assert any(line.startswith("gotk_reconcile_condition{") and 'kind="Sync"' in line for line in kept)
    assert any(line.startswith("gotk_suspend_status{") for line in kept)


def test_made_up_resources_do_not_become_series(kapi_server):
    """Requests for resources, groups and subresources a client makes up (404
    or 403) are counted without their names, as kube counts only installed
    routes: otherwise any authenticated client could add series at will."""
    import requests

    junk = unique("junk")
    headers = {"Authorization": f"Bearer {kapi_server.token}"}
    for path in (f"/api/v1/namespaces/default/{junk}", f"/apis/{junk}.example.com/v1/{junk}s",
                 f"/api/v1/namespaces/default/configmaps/x/{junk}", f"/api/v1/{junk}"):
        response = requests.get(kapi_server.url + path, headers=headers,
                                verify=str(kapi_server.ca_path), timeout=30)
        assert response.status_code == 404, (path, response.status_code)
    text = kapi_server.kubectl("get", "--raw", "/metrics").stdout
    assert junk not in text
    assert 'resource="configmaps"' in text
