"""Request-thread CPU per write, in process, through the whole Django stack.

    python bench/inproc_writes.py --data-dir DIR [--count 300] [--rounds 3]
        [--verbs create,patch,put,apply] [--profile FILE]
        [--compare-bridge | --compare-dispatch]

Attaches to the PostgreSQL of the running kapi serving ``DIR`` (started with
``manage.py serve --data-dir DIR``), builds the API app as a uvicorn worker does
(``kapi.asgi``) and calls ``APIBridge._respond`` with ASGI scopes, as the event
loop would after reading the body: no TLS, no HTTP parsing, no event loop. The
figure is ``time.thread_time`` per operation (CPU of this thread only, so the
neighbours on a shared machine move it little), the minimum and median over
rounds. ``--code DIR`` imports another checkout
(to compare branches against one server). ``--profile`` writes a cProfile (clocked by ``thread_time``) of one more
round of each verb. Every answer is checked (status code), so a broken path
cannot look fast.
"""

from __future__ import annotations

import argparse
import atexit
import cProfile
import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAYLOAD = "x" * 900


def _setup(data_dir: Path, code: Path) -> None:
    os.environ["KAPI_DATA_DIR"] = str(data_dir)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
    metrics_dir = tempfile.mkdtemp(prefix="kapi-inproc-metrics-")
    atexit.register(shutil.rmtree, metrics_dir, True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    sys.path.insert(0, str(code))


def _scope(method: str, path: str, token: str, content_type: str | None, query: str = "") -> dict:
    headers = [
        (b"host", b"127.0.0.1"),
        (b"authorization", f"Bearer {token}".encode()),
        (b"accept", b"application/json"),
        (b"user-agent", b"inproc-bench"),
    ]
    if content_type:
        headers.append((b"content-type", content_type.encode()))
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "https",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": headers,
        "client": ("127.0.0.1", 40000),
        "server": ("127.0.0.1", 6443),
    }


def _serve_list_cache() -> None:
    """Give this process the list and watch cache an API worker has, on an
    event loop of its own thread (as uvicorn's loop is): quota admission then
    knows the benchmark's namespace holds no quota, as a served request does,
    instead of counting the namespace's quotas in a transaction per create."""
    import asyncio
    import threading

    from kapi.storage import listcache

    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, name="list-cache-loop", daemon=True).start()
    listcache.bind_loop(loop)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--verbs", default="create,patch,put,apply")
    parser.add_argument("--profile", type=Path)
    parser.add_argument(
        "--compare-bridge", action="store_true",
        help="alternate short batches of Django's full request cycle and the bridge's lean one in this process",
    )
    parser.add_argument(
        "--compare-dispatch", action="store_true",
        help="alternate short batches of DRF's dispatch and kapi.api.dispatch's lean one in this process",
    )
    parser.add_argument("--code", type=Path, default=ROOT, help="the kapi checkout to import (default: this one)")
    args = parser.parse_args()
    _setup(args.data_dir.resolve(), args.code.resolve())

    import orjson

    from kapi import asgi
    from kapi.runtime import tokens

    bridge = asgi._api
    _serve_list_cache()
    token = next(iter(tokens.load_tokens(tokens.token_file_path())))
    ns = f"inproc-{uuid.uuid4().hex[:6]}"

    def call(method, path, body=b"", content_type=None, query="", expect=(200, 201)):
        if content_type:
            headers_len = len(body)
        else:
            headers_len = 0
        scope = _scope(method, path, token, content_type, query)
        if headers_len:
            scope["headers"].append((b"content-length", str(headers_len).encode()))
        status, _, content, _made = bridge._respond(scope, body)
        if status not in expect:
            raise SystemExit(f"{method} {path}: {status} {content[:300]!r}")
        return content

    call("POST", "/api/v1/namespaces", orjson.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}), "application/json")
    base = f"/api/v1/namespaces/{ns}/configmaps"

    def cm(name, value=PAYLOAD):
        return orjson.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": {"bench": "inproc"}}, "data": {"payload": value}})

    counter = iter(range(10**9))

    def run_create(n):
        prefix = f"c{next(counter)}-"
        for i in range(n):
            call("POST", base, cm(f"{prefix}{i}"), "application/json")

    def names(n):
        prefix = f"u{next(counter)}-"
        out = [f"{prefix}{i}" for i in range(n)]
        for name in out:
            call("POST", base, cm(name), "application/json")
        return out

    def run_patch(n, targets):
        for i, name in enumerate(targets):
            call("PATCH", f"{base}/{name}", orjson.dumps({"data": {"payload": f"p{i}{PAYLOAD}"}}), "application/merge-patch+json")

    def run_put(n, targets):
        for i, name in enumerate(targets):
            current = orjson.loads(call("GET", f"{base}/{name}"))
            current["data"]["payload"] = f"q{i}{PAYLOAD}"
            call("PUT", f"{base}/{name}", orjson.dumps(current), "application/json")

    def run_apply(n, targets):
        for i, name in enumerate(targets):
            call("PATCH", f"{base}/{name}", cm(name, f"a{i}{PAYLOAD}"), "application/apply-patch+yaml", "fieldManager=bench&force=true")

    verbs = args.verbs.split(",")
    runs = {"create": run_create, "patch": run_patch, "put": run_put, "apply": run_apply}
    if args.compare_bridge:
        return _compare_bridge(bridge, verbs, args, runs, names)
    if args.compare_dispatch:
        return _compare_dispatch(verbs, args, runs, names)
    results: dict[str, list[float]] = {v: [] for v in verbs}
    for _ in range(args.rounds):
        for verb in verbs:
            targets = None if verb == "create" else names(args.count)
            if verb == "apply":
                # The apply phase measured is "change": the objects already have this manager.
                run_apply(args.count, targets)
            start = time.thread_time()
            if verb == "create":
                run_create(args.count)
            else:
                {"patch": run_patch, "put": run_put, "apply": run_apply}[verb](args.count, targets)
            results[verb].append((time.thread_time() - start) * 1000 / args.count)
    for verb in verbs:
        values = results[verb]
        print(f"{verb:6} min {min(values):.3f} ms  median {statistics.median(values):.3f} ms  ({', '.join(f'{v:.3f}' for v in values)})")
    if args.profile:
        for verb in verbs:
            profiler = cProfile.Profile(time.thread_time)
            targets = None if verb == "create" else names(args.count)
            if verb == "apply":
                run_apply(args.count, targets)
            profiler.enable()
            if verb == "create":
                run_create(args.count)
            else:
                {"patch": run_patch, "put": run_put, "apply": run_apply}[verb](args.count, targets)
            profiler.disable()
            profiler.dump_stats(f"{args.profile}.{verb}")
        print(f"profiles in {args.profile}.<verb>")
    call("DELETE", f"/api/v1/namespaces/{ns}", expect=(200, 202))
    return 0


def _compare_bridge(bridge, verbs, args, runs, names) -> int:
    """Paired batches in one process: the neighbours' load drifts over
    minutes, so A and B alternate every ``--count`` operations."""
    from django.core.handlers import base

    patterns = bridge._resource_patterns

    def full():
        bridge.lean_signals = False
        bridge._resource_patterns = ()
        base.BaseHandler.load_middleware(bridge, is_async=False)

    def lean():
        bridge.lean_signals = True
        bridge._resource_patterns = patterns
        bridge.load_middleware()

    return _paired(verbs, args, runs, names, ("Django cycle", full), ("lean", lean))


def _compare_dispatch(verbs, args, runs, names) -> int:
    """DRF's ``APIView.dispatch`` against ``kapi.api.dispatch``, paired as
    ``_compare_bridge``: for DRF, ``ResourceView`` answers a DRF ``Response``
    as it did before the lean cycle, and DRF finalizes and renders it."""
    from rest_framework.response import Response
    from rest_framework.views import APIView

    from kapi.api import dispatch
    from kapi.api.views import ResourceView

    lean_dispatch, lean_serve = ResourceView.dispatch, ResourceView._serve

    def drf_serve(self, request):
        result = lean_serve(self, request)
        if not isinstance(result, dispatch.Answer):
            return result
        response = Response(result.data, status=result.status)
        for name, value in result.headers.items():
            response[name] = value
        return response

    def drf():
        ResourceView.dispatch, ResourceView._serve = APIView.dispatch, drf_serve

    def lean():
        ResourceView.dispatch, ResourceView._serve = lean_dispatch, lean_serve

    return _paired(verbs, args, runs, names, ("DRF dispatch", drf), ("lean", lean))


def _paired(verbs, args, runs, names, first, second) -> int:
    for verb in verbs:
        pairs = []
        for _ in range(args.rounds):
            sample = []
            for _, variant in (first, second):
                variant()
                targets = None if verb == "create" else names(args.count)
                if verb == "apply":
                    runs["apply"](args.count, targets)
                start = time.thread_time()
                runs[verb](args.count) if verb == "create" else runs[verb](args.count, targets)
                sample.append((time.thread_time() - start) * 1000 / args.count)
            pairs.append(sample)
        a = statistics.median(p[0] for p in pairs)
        b = statistics.median(p[1] for p in pairs)
        ratio = statistics.median(p[1] / p[0] for p in pairs)
        print(f"{verb:6} {first[0]} {a:.3f} ms  {second[0]} {b:.3f} ms  "
              f"median paired ratio {ratio:.2f}  ({len(pairs)} pairs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
