"""What a Sync leaves to others (``sync.driftpolicy``): the ``sync.kapi.dev/ssa``
annotation (IfNotPresent, Ignore) and ``spec.driftIgnoreRules``, under drift
correction and in the push plan."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from sync_gitops import Work, create, sync_namespace, unique, wait_for

API = "sync.kapi.dev/v1"


def _setup(server, tmp_path, **spec) -> tuple[str, Work]:
    ns = unique("drift")
    create(server, *sync_namespace(ns),
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns}, "spec": {}},
           {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
            "spec": {"sourceRef": {"name": "app"}, **spec}})
    return ns, Work(server, ns, "app", tmp_path / ns)


def _get(server, *args: str) -> dict | None:
    done = server.kubectl("get", *args, "-o", "json", check=False)
    return json.loads(done.stdout) if done.returncode == 0 else None


def _applied(server, ns: str, work: Work) -> None:
    head = work.git("rev-parse", "HEAD").stdout.strip()
    wait_for(lambda: (_get(server, "sync", "app", "-n", ns) or {}).get("status", {})
             .get("lastAppliedRevision", "").endswith(head), what="the revision to be applied")


def _reconciled(server, ns: str) -> None:
    """Ask for a full reconcile (drift correction included) and wait until it is handled."""
    stamp = datetime.now(UTC).isoformat()
    server.kubectl("annotate", "sync", "app", "-n", ns, "--overwrite", f"sync.kapi.dev/requestedAt={stamp}")
    wait_for(lambda: (_get(server, "sync", "app", "-n", ns) or {}).get("status", {})
             .get("lastHandledReconcileAt") == stamp, what="the requested reconcile")


def test_if_not_present_and_ignore(kapi_server, tmp_path):
    ns, work = _setup(kapi_server, tmp_path)
    seed = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "seed", "annotations": {"sync.kapi.dev/ssa": "IfNotPresent"}},
            "data": {"token": "from-git"}}
    skipped = {"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "skipped", "annotations": {"sync.kapi.dev/ssa": "Ignore"}}}
    normal = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "normal"}, "data": {"v": "1"}}
    work.write("seed.yaml", seed)
    work.write("skipped.yaml", skipped)
    work.write("normal.yaml", normal)
    work.push("first")
    _applied(kapi_server, ns, work)
    assert _get(kapi_server, "cm", "seed", "-n", ns)["data"] == {"token": "from-git"}
    assert _get(kapi_server, "cm", "skipped", "-n", ns) is None

    # Another tool rotates the seed and edits the normal one: only the normal
    # one is restored; a new value of the seed in git is not applied either.
    kapi_server.kubectl("patch", "cm", "seed", "-n", ns, "--type=merge", "-p", '{"data":{"token":"rotated"}}')
    kapi_server.kubectl("patch", "cm", "normal", "-n", ns, "--type=merge", "-p", '{"data":{"v":"edited"}}')
    wait_for(lambda: _get(kapi_server, "cm", "normal", "-n", ns)["data"] == {"v": "1"}, what="drift corrected")
    work.write("seed.yaml", {**seed, "data": {"token": "from-git-2"}})
    done = work.push("new seed")
    assert f"  ~ ConfigMap {ns}/seed" not in done.stderr
    _applied(kapi_server, ns, work)
    _reconciled(kapi_server, ns)
    assert _get(kapi_server, "cm", "seed", "-n", ns)["data"] == {"token": "rotated"}
    assert _get(kapi_server, "cm", "skipped", "-n", ns) is None


def test_drift_ignore_rules_leave_replicas_to_an_autoscaler(kapi_server, tmp_path):
    rules = [{"paths": ["/spec/replicas"], "target": {"kind": "Deployment", "name": "web.*"}}]
    ns, work = _setup(kapi_server, tmp_path, driftIgnoreRules=rules)
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}]}}},
    }
    work.write("web.yaml", deployment)
    work.push("web")
    _applied(kapi_server, ns, work)
    assert _get(kapi_server, "deployment", "web", "-n", ns)["spec"]["replicas"] == 2  # created as in git

    kapi_server.kubectl("scale", "deployment", "web", "-n", ns, "--replicas=5")
    kapi_server.kubectl("set", "image", "deployment/web", "-n", ns, "c=nginx:evil")
    wait_for(lambda: _get(kapi_server, "deployment", "web", "-n", ns)["spec"]["template"]["spec"]
             ["containers"][0]["image"] == "nginx:1.25", what="the image to be restored")
    _reconciled(kapi_server, ns)
    assert _get(kapi_server, "deployment", "web", "-n", ns)["spec"]["replicas"] == 5

    # A push changing replicas in git does not plan or apply it either.
    deployment["spec"]["replicas"] = 3
    work.write("web.yaml", deployment)
    done = work.push("replicas in git")
    assert f"Sync {ns}/app: plan: 0 to create, 0 to change, 0 to prune, 1 unchanged" in done.stderr
    _applied(kapi_server, ns, work)
    assert _get(kapi_server, "deployment", "web", "-n", ns)["spec"]["replicas"] == 5
