"""A Sync applying to another API server (``spec.kubeConfig``): figures with two
real ``serve``\\s, kapi (the hub) and a second kapi as the target cluster.

    python bench/remote_sync.py [--objects 1000] [--repeat 5] [--idle 20]

* push-to-Ready on the target, one object (validate-on-push on: the plan is a
  dry run on the target);
* push-to-Ready on the target for N objects (validate-on-push off, as
  bench/sync.py's first reconcile);
* drift on the target restored: a merge patch there by another manager until
  the value is back (the shared watch requests a drift pass);
* CPU of kapi's processes (hub) per idle target with 10 Syncs watching it:
  the hub's CPU over ``--idle`` seconds with the 10 Syncs Ready, minus the
  same before they existed.

The target's user is a ServiceAccount token with rights in one namespace.
"""

from __future__ import annotations

import argparse
import base64
import importlib.util
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from idle import cpu_seconds, every_process  # noqa: E402
from kapi_testserver import start_server, stop_server  # noqa: E402
from sync_gitops import (  # noqa: E402
    Work,
    create,
    namespace_deployer,
    sync_namespace,
    target_kubeconfig,
)

# bench/sync.py's client (by path: the project's own ``sync`` package has that name).
_spec = importlib.util.spec_from_file_location("bench_sync", ROOT / "bench" / "sync.py")
_bench_sync = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_bench_sync)
Client, cm = _bench_sync.Client, _bench_sync.cm

API = "sync.kapi.dev/v1"
TARGET_NS = "apps"


def target_setup(target) -> str:
    """A kubeconfig for the target's namespace-only ServiceAccount."""
    return target_kubeconfig(target, {"token": namespace_deployer(target, TARGET_NS)})


def hub_setup(hub, tmp: Path, ns: str, kubeconfig: str, syncs: dict[str, str], **repo_spec) -> Work:
    """Namespace ``ns`` on the hub with a hosted repository and one Sync per
    ``name: path`` of ``syncs``, all applying to the target."""
    docs = [*sync_namespace(ns),
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "target", "namespace": ns},
             "data": {"value": base64.b64encode(kubeconfig.encode()).decode()}},
            {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns},
             "spec": repo_spec}]
    docs += [{"apiVersion": API, "kind": "Sync", "metadata": {"name": name, "namespace": ns},
              "spec": {"sourceRef": {"name": "app"}, "path": path, "targetNamespace": TARGET_NS,
                       "kubeConfig": {"secretRef": {"name": "target"}}}} for name, path in syncs.items()]
    create(hub, *docs)
    return Work(hub, ns, "app", tmp / ns)


def applied(client: Client, ns: str, work: Work, name: str = "app"):
    head = work.git("rev-parse", "HEAD").stdout.strip()

    def check() -> bool:
        status = client.sync(ns, name).get("status", {})
        ready = next((c for c in status.get("conditions") or [] if c["type"] == "Ready"), {})
        return status.get("lastAppliedRevision", "").endswith(head) and ready.get("status") == "True"
    return check


def hub_cpu(hub, seconds: float) -> float:
    procs = every_process(hub)
    before = {pid: cpu_seconds(pid) for pid in procs}
    time.sleep(seconds)
    return sum(cpu_seconds(pid) - before[pid] for pid in procs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--idle", type=float, default=20.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kapi-bench-remote-") as tmpdir:
        tmp = Path(tmpdir)
        target = start_server(tmp / "target")
        hub = start_server(tmp / "hub", env={**os.environ, "KAPI_SYNC_REMOTE_ALLOWED_NETWORKS": "127.0.0.0/8"})
        try:
            kubeconfig = target_setup(target)
            client, remote = Client(hub), Client(target)
            time.sleep(3)  # let both servers settle after start
            baseline = hub_cpu(hub, args.idle)

            # -- push-to-Ready on the target, one object -------------------------------------
            work = hub_setup(hub, tmp, "small", kubeconfig, {"app": "./"})
            work.write("cm.yaml", cm("one", "0"))
            work.push("first")
            client.wait(applied(client, "small", work))
            times = _bench_sync.push_times(client, "small", work, args.repeat, applied)
            print(f"push-to-Ready on the target (one-object change, plan = dry run on the target): "
                  f"median {statistics.median(times):.2f} s, max {max(times):.2f} s over {len(times)}")

            # -- drift on the target restored ------------------------------------------------
            drift = _bench_sync.drift_times(remote, f"/api/v1/namespaces/{TARGET_NS}/configmaps/one", args.repeat)
            print(f"drift on the target restored: median {statistics.median(drift):.2f} s, "
                  f"max {max(drift):.2f} s over {len(drift)}")

            # -- N objects --------------------------------------------------------------------
            work = hub_setup(hub, tmp, "large", kubeconfig, {"app": "./"}, validateOnPush=False)
            for i in range(args.objects):
                work.write(f"cms/cm{i:05}.yaml", cm(f"large{i:05}", "x"))
            work.git("add", "-A")
            work.git("commit", "-q", "-m", "many")
            start = time.monotonic()
            work.git("push", "-q", "origin", "HEAD:main")
            client.wait(applied(client, "large", work), timeout=900)
            status = client.sync("large", "app")["status"]
            print(f"push-to-Ready on the target, {args.objects} objects: {time.monotonic() - start:.2f} s "
                  f"(applied {status['applied']})")

            # -- 10 idle Syncs watching one target ----------------------------------------------
            names = {f"s{i}": f"./s{i}" for i in range(10)}
            work = hub_setup(hub, tmp, "idle", kubeconfig, names, validateOnPush=False)
            for i in range(10):
                work.write(f"s{i}/cm.yaml", cm(f"idle{i}", "x"))
            work.push("ten syncs")
            for name in names:
                client.wait(applied(client, "idle", work, name), timeout=120)
            time.sleep(3)
            busy = hub_cpu(hub, args.idle)
            print(f"hub CPU, idle, one target watched by 10 Syncs (+ the Syncs above): "
                  f"{100 * busy / args.idle:.2f} % of a core; without any Sync: {100 * baseline / args.idle:.2f} %; "
                  f"difference {100 * (busy - baseline) / args.idle:+.2f} %")
        finally:
            stop_server(hub)
            stop_server(target)


if __name__ == "__main__":
    main()
