"""What the kustomize sandbox costs (issue 14): one overlay over a base of N
ConfigMaps, built with plain ``kubectl kustomize`` (as before) and through
``sync.kustomize.build`` (pre-check of every reachable reference, scrubbed
environment, rlimits, output cap). Prints wall time and CPU (this process
plus its children) per build.

    python bench/sync_sandbox.py [OBJECTS] [ROUNDS]
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from sync import kustomize  # noqa: E402


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _tree(root: Path, objects: int) -> None:
    (root / "base").mkdir(parents=True)
    (root / "app").mkdir()
    names = []
    for i in range(objects):
        name = f"cm-{i}.yaml"
        (root / "base" / name).write_text(yaml.safe_dump(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{i}"}, "data": {"k": "v"}}))
        names.append(name)
    (root / "base" / "kustomization.yaml").write_text(yaml.safe_dump({"resources": names}))
    (root / "app" / "kustomization.yaml").write_text(yaml.safe_dump({"resources": ["../base"], "namePrefix": "p-"}))


def _measure(label: str, rounds: int, build) -> None:
    build()  # warm the page cache
    wall, cpu = time.perf_counter(), _cpu()
    for _ in range(rounds):
        build()
    wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    print(f"{label:<28} wall {wall / rounds * 1000:8.1f} ms/build   cpu {cpu / rounds * 1000:8.1f} ms/build")


def main() -> None:
    objects = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    kubectl = os.path.realpath(shutil.which("kubectl"))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _tree(root, objects)
        print(f"overlay over {objects} ConfigMaps, {rounds} builds each")
        _measure("kubectl kustomize (plain)", rounds, lambda: subprocess.run(
            [kubectl, "kustomize", str(root / "app")], capture_output=True, check=True))
        _measure("sync.kustomize.build", rounds, lambda: kustomize.build(root, root / "app"))
        _measure("precheck only", rounds, lambda: kustomize.precheck(root, root / "app"))


if __name__ == "__main__":
    main()
