"""Issue #35's figures: render times of the GitOps pages at scale.

Starts a real ``serve`` (for its migrated PostgreSQL), writes straight to its
storage (no change log, so no controller acts on them) 200 Syncs in 20
namespaces with their GitRepositories, five applied ConfigMaps each, and one
more Sync whose tree is 1,000 objects (100 Deployments, each with a
ReplicaSet of 8 Pods, linked by ownerReferences); then times with Django's
test client, in process against that database, as a superuser: the home (200
tiles), the home filtered to one namespace, the big Sync's tree page and a
Sync's desired-against-live page is left out (it renders git). Prints the
medians; no figure is asserted anywhere.

    python bench/ui_pages.py [--syncs 200] [--deployments 100] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import sys
import uuid

from _inproc import median_ms as _median_ms
from _inproc import on_served_database

GROUP = "sync.kapi.dev"
NOW = "2026-01-01T00:00:00Z"
SHA = "0123456789abcdef0123456789abcdef01234567"


def _meta(ns: str, name: str, **extra) -> dict:
    return {"name": name, "namespace": ns, "uid": str(uuid.uuid4()), "creationTimestamp": NOW,
            "generation": 1, **extra}


def _applied(ns: str, sync: str, name: str, kind: str, api: str, **body) -> dict:
    labels = {"sync.kapi.dev/name": sync, "sync.kapi.dev/namespace": ns}
    managed = [{"manager": "kapi-sync", "operation": "Apply", "apiVersion": api, "time": NOW,
                "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {"f:labels": {}}}}]
    return {"apiVersion": api, "kind": kind, "metadata": _meta(ns, name, labels=labels, managedFields=managed), **body}


def _sync(ns: str, name: str, inventory: list[tuple[str, str, str, str, str]]) -> dict:
    revision = f"main@sha1:{SHA}"
    return {
        "apiVersion": f"{GROUP}/v1", "kind": "Sync",
        "metadata": _meta(ns, name, finalizers=["sync.kapi.dev/finalizer"]),
        "spec": {"sourceRef": {"kind": "GitRepository", "name": name}, "path": "./", "interval": "10m",
                 "prune": True, "suspend": False, "force": False, "wait": False, "historyLimit": 5},
        "status": {
            "observedGeneration": 1, "lastAppliedRevision": revision, "lastAttemptedRevision": revision,
            "conditions": [{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
                            "message": f"Applied revision: {revision}", "lastTransitionTime": NOW}],
            "history": [{"revision": revision, "lastReconciled": NOW, "lastReconciledStatus": "ReconciliationSucceeded",
                         "applied": len(inventory), "pruned": 0}],
            "inventory": {"entries": [{"id": f"{i_ns}_{i_name}_{g}_{k}", "v": v} for i_ns, i_name, g, k, v in inventory]},
        },
    }


def _repo(ns: str, name: str) -> dict:
    return {"apiVersion": f"{GROUP}/v1", "kind": "GitRepository", "metadata": _meta(ns, name),
            "spec": {"interval": "1m", "timeout": "60s", "validateOnPush": True},
            "status": {"artifact": {"revision": f"main@sha1:{SHA}", "lastUpdateTime": NOW,
                                    "message": "a commit message of the bench", "author": "bench <b@example.com>"},
                       "conditions": [{"type": "Ready", "status": "True", "reason": "Succeeded", "message": "ok"}]}}


def objects(syncs: int, deployments: int) -> list[tuple[str, str, dict]]:
    """(group, resource, object) rows to store."""
    rows: list[tuple[str, str, dict]] = []
    for i in range(syncs):
        ns, name = f"team-{i % 20:02d}", f"app-{i:03d}"
        inventory = []
        for j in range(5):
            cm = _applied(ns, name, f"{name}-cm-{j}", "ConfigMap", "v1", data={"k": str(j)})
            rows.append(("", "configmaps", cm))
            inventory.append((ns, cm["metadata"]["name"], "", "ConfigMap", "v1"))
        rows += [(GROUP, "syncs", _sync(ns, name, inventory)), (GROUP, "gitrepositories", _repo(ns, name))]
    ns, name = "big", "platform"
    inventory = []
    for d in range(deployments):
        dep = _applied(ns, name, f"web-{d:03d}", "Deployment", "apps/v1",
                       spec={"replicas": 8, "selector": {"matchLabels": {"app": f"web-{d:03d}"}}},
                       status={"observedGeneration": 1, "replicas": 8, "readyReplicas": 8,
                               "updatedReplicas": 8, "availableReplicas": 8})
        rows.append(("apps", "deployments", dep))
        inventory.append((ns, dep["metadata"]["name"], "apps", "Deployment", "v1"))
        owner = {"apiVersion": "apps/v1", "kind": "Deployment", "name": dep["metadata"]["name"],
                 "uid": dep["metadata"]["uid"], "controller": True}
        rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
              "metadata": _meta(ns, f"web-{d:03d}-5d8f", ownerReferences=[owner]),
              "spec": {"replicas": 8}, "status": {"replicas": 8, "readyReplicas": 8, "observedGeneration": 1}}
        rows.append(("apps", "replicasets", rs))
        rs_owner = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs["metadata"]["name"],
                    "uid": rs["metadata"]["uid"], "controller": True}
        for p in range(8):
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": _meta(ns, f"web-{d:03d}-5d8f-{p:05d}", ownerReferences=[rs_owner]),
                   "spec": {"containers": [{"name": "web", "image": "nginx"}]},
                   "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}
            rows.append(("", "pods", pod))
    rows += [(GROUP, "syncs", _sync(ns, name, inventory)), (GROUP, "gitrepositories", _repo(ns, name))]
    namespaces = sorted({obj["metadata"]["namespace"] for _g, _r, obj in rows})
    for ns in namespaces:
        rows.append(("", "namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                        "metadata": {"name": ns, "uid": str(uuid.uuid4()), "creationTimestamp": NOW},
                                        "status": {"phase": "Active"}}))
    return rows


def store(rows: list[tuple[str, str, dict]]) -> None:
    from django.db import connection

    columns = [[], [], [], [], [], [], []]
    for group, resource, obj in rows:
        meta = obj["metadata"]
        for column, value in zip(columns, (group, resource, meta.get("namespace", ""), meta["name"],
                                           meta["uid"], json.dumps(obj), json.dumps(meta.get("labels") or {})),
                                 strict=True):
            column.append(value)
    with connection.cursor() as cur:
        cur.execute(
            'INSERT INTO kapi_object ("group", resource, namespace, name, uid, resource_version, data, labels)'
            " SELECT g, r, ns, n, u::uuid, nextval('kapi_resource_version'), d::jsonb, l::jsonb"
            " FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[])"
            " AS t(g, r, ns, n, u, d, l)",
            columns,
        )
        cur.execute("ANALYZE kapi_object")


def profile(client, url: str) -> None:
    """The page's 25 costliest functions (cumulative), to stderr."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.runcall(client.get, url)
    pstats.Stats(profiler, stream=sys.stderr).sort_stats("cumulative").print_stats(25)


def measure(syncs: int, deployments: int, runs: int, profiled: bool = False) -> dict:
    from django.contrib.auth import get_user_model
    from django.test import Client

    store(objects(syncs, deployments))
    user = get_user_model().objects.create_superuser("bench-ui", password="unused-pw")
    client = Client()
    client.force_login(user)
    tree = f"/admin/kapi/{GROUP}/v1/syncs/big/platform/tree/"
    page = client.get(tree).content.decode()
    nodes = page.count('class="tree-node"')
    home = client.get("/admin/").content.decode()
    if profiled:
        profile(client, tree)
        profile(client, "/admin/")
    return {
        "syncs": syncs + 1,
        "tiles_on_home": home.count('class="kapi-tile '),
        "tree_nodes": nodes,
        "home_ms": _median_ms(client, "/admin/", runs, "kapi-tile"),
        "home_one_namespace_ms": _median_ms(client, "/admin/?namespace=team-03", runs, "kapi-tile"),
        "home_text_filter_ms": _median_ms(client, "/admin/?q=app-1", runs, "kapi-tile"),
        "tree_1000_ms": _median_ms(client, tree, runs, "tree-node"),
        "live_poll_ms": _median_ms(client, "/admin/live/?since=1&ns=big", runs, "changed"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--syncs", type=int, default=200)
    parser.add_argument("--deployments", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profile", action="store_true", help="print where the tree and home pages spend")
    args = parser.parse_args()

    print(json.dumps(on_served_database(lambda: measure(args.syncs, args.deployments, args.runs, args.profile)), indent=2))

if __name__ == "__main__":
    main()
