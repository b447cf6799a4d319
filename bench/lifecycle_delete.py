"""Deletion lifecycle figures: namespace termination and garbage collection.

For each worker count (Celery prefork processes, ``serve --celery-concurrency``)
a fresh server is started, then:

* a namespace holding ``--objects`` ConfigMaps is deleted: seconds from the
  DELETE until GET of the namespace answers 404;
* an owner with ``--dependents`` ConfigMaps naming it in ownerReferences is
  deleted (Background): seconds from the DELETE until the last dependent is gone.

    .venv/bin/python bench/lifecycle_delete.py                 # 5,000 / 1,000, 1 and 2 workers
    .venv/bin/python bench/lifecycle_delete.py --objects 500 --dependents 200 --workers 1
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.append(str(Path(__file__).resolve().parent.parent / "tests"))

from _load import Target, run_load


def _request(target: Target, method: str, path: str, body=None):
    import json

    conn = target.connection()
    conn.request(
        method,
        path,
        body=json.dumps(body).encode() if body is not None else None,
        headers=target.headers(),
    )
    response = conn.getresponse()
    payload = response.read()
    conn.close()
    return response.status, (json.loads(payload) if payload else None)


def _wait(predicate, timeout: float = 900.0, interval: float = 0.1) -> float:
    start = time.perf_counter()
    while not predicate():
        if time.perf_counter() - start > timeout:
            raise SystemExit("timed out")
        time.sleep(interval)
    return time.perf_counter() - start


def _fill(target: Target, namespace: str, n: int, owner: dict | None = None) -> None:
    meta_extra = {}
    if owner is not None:
        meta_extra["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
            }
        ]
        meta_extra["labels"] = {"owner": owner["metadata"]["name"]}
    requests = [
        (
            "POST",
            f"/api/v1/namespaces/{namespace}/configmaps",
            {"metadata": {"name": f"o{i:05d}", **meta_extra}, "data": {"i": str(i)}},
            "application/json",
            (201,),
        )
        for i in range(n)
    ]
    figures = run_load(target, requests, clients=8, processes=2)
    if figures["errors"]:
        raise SystemExit(f"create failed: {figures['errors'][:3]}")


def namespace_deletion(target: Target, objects: int) -> float:
    ns = f"bench-ns-{uuid.uuid4().hex[:6]}"
    assert (
        _request(target, "POST", "/api/v1/namespaces", {"metadata": {"name": ns}})[0]
        == 201
    )
    _fill(target, ns, objects)
    time.sleep(3)  # let the feed read the creations first
    start = time.perf_counter()
    assert _request(target, "DELETE", f"/api/v1/namespaces/{ns}")[0] == 200
    _wait(
        lambda: _request(target, "GET", f"/api/v1/namespaces/{ns}")[0] == 404,
        interval=0.2,
    )
    return time.perf_counter() - start


def garbage_collection(target: Target, dependents: int) -> float:
    ns = f"bench-gc-{uuid.uuid4().hex[:6]}"
    assert (
        _request(target, "POST", "/api/v1/namespaces", {"metadata": {"name": ns}})[0]
        == 201
    )
    status, owner = _request(
        target,
        "POST",
        f"/api/v1/namespaces/{ns}/configmaps",
        {"metadata": {"name": "owner"}},
    )
    assert status == 201
    _fill(target, ns, dependents, owner)
    time.sleep(3)
    path = f"/api/v1/namespaces/{ns}/configmaps?labelSelector=owner%3Downer&limit=1"
    start = time.perf_counter()
    assert (
        _request(target, "DELETE", f"/api/v1/namespaces/{ns}/configmaps/owner")[0]
        == 200
    )
    _wait(lambda: not _request(target, "GET", path)[1]["items"], interval=0.1)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--objects", type=int, default=5000)
    parser.add_argument("--dependents", type=int, default=1000)
    parser.add_argument(
        "--workers", default="1,2", help="comma-separated worker counts"
    )
    args = parser.parse_args()
    from kapi_testserver import start_server, stop_server

    rows = []
    for workers in [int(w) for w in args.workers.split(",")]:
        with tempfile.TemporaryDirectory(prefix="kapi-bench-") as tmp:
            srv = start_server(
                Path(tmp) / "data", args=("--celery-concurrency", str(workers))
            )
            try:
                target = Target(srv.url, srv.token, str(srv.ca_path))
                ns_seconds = namespace_deletion(target, args.objects)
                gc_seconds = garbage_collection(target, args.dependents)
            finally:
                stop_server(srv)
        rows.append((workers, ns_seconds, gc_seconds))
        print(
            f"workers={workers}: namespace with {args.objects} objects gone in {ns_seconds:.2f} s "
            f"({args.objects / ns_seconds:.0f}/s); {args.dependents} dependents collected in "
            f"{gc_seconds:.2f} s ({args.dependents / gc_seconds:.0f}/s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
