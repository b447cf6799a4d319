"""GitOps figures on a real ``serve`` (API, Celery worker and beat) with real git.

    python bench/sync.py [--objects 1000] [--repeat 5]

* push-to-Ready: ``git push`` of a one-object change until the Sync reports the
  new revision applied (validate-on-push on);
* first reconcile of a revision of N ConfigMaps (push, then until Ready);
* unchanged reconcile of that revision (``sync.kapi.dev/requestedAt``), and how
  many objects got a new resourceVersion (must be 0);
* drift-to-restored: a merge patch by another manager until the value is back;
* push-to-plan: a push changing 10 of the N objects, validation on, until git
  returns (the plan of every Sync is printed before the push is accepted).
"""

from __future__ import annotations

import argparse
import json
import ssl
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from kapi_testserver import start_server, stop_server  # noqa: E402
from sync_gitops import Work, create, sync_namespace  # noqa: E402

API = "sync.kapi.dev/v1"


class Client:
    def __init__(self, server) -> None:
        self.server = server
        self.context = ssl.create_default_context(cafile=str(server.ca_path))

    def request(self, method: str, path: str, body: dict | None = None,
                content_type: str = "application/json") -> dict:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.server.url + path, data=data, method=method, headers={
            "Authorization": f"Bearer {self.server.token}", "Content-Type": content_type})
        with urllib.request.urlopen(req, context=self.context, timeout=30) as response:
            return json.loads(response.read())

    def sync(self, ns: str, name: str) -> dict:
        return self.request("GET", f"/apis/sync.kapi.dev/v1/namespaces/{ns}/syncs/{name}")

    def wait(self, predicate, timeout: float = 120.0) -> float:
        start = time.monotonic()
        while time.monotonic() - start < timeout:
            if predicate():
                return time.monotonic() - start
            time.sleep(0.02)
        raise SystemExit("timed out")


def cm(name: str, value: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"v": value}}


def setup(server, tmp: Path, ns: str, **repo_spec) -> Work:
    create(server,
           *sync_namespace(ns),
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns},
            "spec": repo_spec},
           {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
            "spec": {"sourceRef": {"name": "app"}, "path": "./"}})
    return Work(server, ns, "app", tmp / ns)


def applied(client: Client, ns: str, work: Work):
    head = work.git("rev-parse", "HEAD").stdout.strip()

    def check() -> bool:
        return client.sync(ns, "app").get("status", {}).get("lastAppliedRevision", "").endswith(head)
    return check


def push_times(client: Client, ns: str, work: Work, repeat: int, applied) -> list[float]:
    """Seconds from ``git push`` of a change of ConfigMap ``one`` until
    ``applied(client, ns, work)`` holds, ``repeat`` times."""
    times = []
    for i in range(1, repeat + 1):
        work.write("cm.yaml", cm("one", str(i)))
        work.git("add", "-A")
        work.git("commit", "-q", "-m", f"change {i}")
        start = time.monotonic()
        work.git("push", "-q", "origin", "HEAD:main")
        client.wait(applied(client, ns, work))
        times.append(time.monotonic() - start)
    return times


def drift_times(client: Client, path: str, repeat: int) -> list[float]:
    """Seconds from a merge patch of the ConfigMap at ``path`` (another
    manager) until its value is back, ``repeat`` times."""
    value = client.request("GET", path)["data"]["v"]
    drift = []
    for _ in range(repeat):
        start = time.monotonic()
        client.request("PATCH", path, {"data": {"v": "drifted"}}, "application/merge-patch+json")
        client.wait(lambda: client.request("GET", path)["data"]["v"] == value, timeout=60)
        drift.append(time.monotonic() - start)
        time.sleep(0.5)
    return drift


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kapi-bench-sync-") as tmpdir:
        tmp = Path(tmpdir)
        server = start_server(tmp / "data")
        try:
            client = Client(server)
            # -- push-to-Ready, one object -------------------------------------------------
            work = setup(server, tmp, "bench-small")
            work.write("cm.yaml", cm("one", "0"))
            work.push("first")
            client.wait(applied(client, "bench-small", work))
            times = push_times(client, "bench-small", work, args.repeat, applied)
            print(f"push-to-Ready (one-object change, validate-on-push on): median {statistics.median(times):.2f} s, "
                  f"max {max(times):.2f} s over {len(times)}")

            # -- drift-to-restored --------------------------------------------------------
            drift = drift_times(client, "/api/v1/namespaces/bench-small/configmaps/one", args.repeat)
            print(f"drift-to-restored: median {statistics.median(drift):.2f} s, max {max(drift):.2f} s "
                  f"over {len(drift)}")

            # -- first reconcile of N objects ---------------------------------------------------
            ns = "bench-large"
            work = setup(server, tmp, ns, validateOnPush=False)
            for i in range(args.objects):
                work.write(f"cms/cm{i:05}.yaml", cm(f"cm{i:05}", "x"))
            work.git("add", "-A")
            work.git("commit", "-q", "-m", "many")
            start = time.monotonic()
            work.git("push", "-q", "origin", "HEAD:main")
            pushed = time.monotonic() - start
            first = client.wait(applied(client, ns, work), timeout=600) + pushed
            status = client.sync(ns, "app")["status"]
            print(f"first reconcile of {args.objects} objects (push to Ready): {first:.2f} s "
                  f"(applied {status['applied']})")

            # -- unchanged reconcile ----------------------------------------------------------
            listing = client.request("GET", f"/api/v1/namespaces/{ns}/configmaps")
            before = {i["metadata"]["name"]: i["metadata"]["resourceVersion"] for i in listing["items"]}
            unchanged = []
            for _ in range(3):
                stamp = f"bench-{time.time()}"
                start = time.monotonic()
                client.request("PATCH", f"/apis/sync.kapi.dev/v1/namespaces/{ns}/syncs/app",
                               {"metadata": {"annotations": {"sync.kapi.dev/requestedAt": stamp}}},
                               "application/merge-patch+json")
                client.wait(lambda s=stamp: client.sync(ns, "app").get("status", {}).get("lastHandledReconcileAt") == s)
                unchanged.append(time.monotonic() - start)
            listing = client.request("GET", f"/api/v1/namespaces/{ns}/configmaps")
            after = {i["metadata"]["name"]: i["metadata"]["resourceVersion"] for i in listing["items"]}
            rewritten = sum(1 for k, v in after.items() if before.get(k) != v)
            print(f"unchanged reconcile of {args.objects} objects (requestedAt: render, bulk compare with the live objects, "
                  "apply only what drifted): "
                  f"median {statistics.median(unchanged):.2f} s; objects rewritten: {rewritten}")

            # -- push-to-plan: 10 of N objects changed, validation (and its plan) on -------------
            client.request("PATCH", f"/apis/sync.kapi.dev/v1/namespaces/{ns}/gitrepositories/app",
                           {"spec": {"validateOnPush": True}}, "application/merge-patch+json")
            plans = []
            for round_ in range(1, args.repeat + 1):
                for i in range(10):
                    work.write(f"cms/cm{i:05}.yaml", cm(f"cm{i:05}", f"plan-{round_}"))
                work.git("add", "-A")
                work.git("commit", "-q", "-m", f"ten changed {round_}")
                start = time.monotonic()
                done = work.git("push", "origin", "HEAD:main")
                plans.append(time.monotonic() - start)
                if "plan: 0 to create, 10 to change" not in done.stderr:
                    raise SystemExit(f"no plan of 10 changes in the push's output: {done.stderr[-2000:]}")
                client.wait(applied(client, ns, work), timeout=600)
            print(f"push-to-plan ({args.objects} objects, 10 changed; the push ends once the plan is printed): "
                  f"median {statistics.median(plans):.2f} s, max {max(plans):.2f} s over {len(plans)}")
        finally:
            stop_server(server)


if __name__ == "__main__":
    main()
