"""``git push -o wait`` round trip on a real ``serve`` (API, Celery worker and beat).

    python bench/push_wait.py [--repeat 10]

A one-object change (a ConfigMap's value), pushed with ``-o wait``: the time
from ``git push`` starting to git exiting 0, which is when the Sync reports the
new revision applied (validate-on-push on, so it includes the plan). For
comparison, the same change pushed without the option (git returns once the
revision is validated and stored, before it is applied).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT / "tests"))  # after the stdlib: tests/selectors is a package

from kapi_testserver import start_server, stop_server  # noqa: E402
from sync_gitops import Work, create, sync_namespace  # noqa: E402

API = "sync.kapi.dev/v1"


def _cm(value: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "one"}, "data": {"v": value}}


def _push(work: Work, value: str, *options: str) -> tuple[float, str]:
    work.write("cm.yaml", _cm(value))
    work.git("add", "-A")
    work.git("commit", "-q", "-m", f"value {value}")
    start = time.monotonic()
    done = work.git("push", *options, "origin", "HEAD:main", check=False)
    took = time.monotonic() - start
    if done.returncode != 0:
        raise SystemExit(f"push failed: {done.stderr[-2000:]}")
    return took, done.stderr


def _applied(server, ns: str, work: Work) -> None:
    head = work.git("rev-parse", "HEAD").stdout.strip()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        revision = server.kubectl("get", "sync", "app", "-n", ns, "-o",
                                  "jsonpath={.status.lastAppliedRevision}").stdout
        if revision.endswith(head):
            return
        time.sleep(0.1)
    raise SystemExit("the plain push was not applied within 60 s")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kapi-bench-push-wait-") as tmpdir:
        tmp = Path(tmpdir)
        server = start_server(tmp / "data")
        try:
            ns = "bench-wait"
            create(server, *sync_namespace(ns),
                   {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": "app", "namespace": ns},
                    "spec": {}},
                   {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
                    "spec": {"sourceRef": {"name": "app"}, "path": "./"}})
            work = Work(server, ns, "app", tmp / ns)
            _push(work, "warm-up", "-o", "wait")
            waited, plain, output = [], [], ""
            for i in range(args.repeat):
                took, output = _push(work, f"w{i}", "-o", "wait")
                if "Ready: applied" not in output:
                    raise SystemExit(f"no Ready line: {output[-2000:]}")
                waited.append(took)
                plain.append(_push(work, f"p{i}")[0])
                _applied(server, ns, work)  # before the next round starts
            print(f"git push -o wait, one-object change, until the Sync is Ready: median "
                  f"{statistics.median(waited):.2f} s, max {max(waited):.2f} s over {len(waited)}")
            print(f"git push without the option (returns before the apply): median "
                  f"{statistics.median(plain):.2f} s, max {max(plain):.2f} s over {len(plain)}")
            print("the last -o wait push said:")
            print("\n".join(line for line in output.splitlines() if line.startswith("remote: kapi:")))
        finally:
            stop_server(server)


if __name__ == "__main__":
    main()
