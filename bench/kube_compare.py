"""kube-apiserver against kapi, interleaved: ``kbench.py compare`` with both servers' processes.

    python bench/kube_compare.py --data-dir DIR --kube-work-dir KDIR [--rounds 3] [--out FILE]

A is the reference started by ``bench/kube_reference.py --work-dir KDIR``
(etcd, kube-apiserver, kube-controller-manager: its ``--server-pids`` are
those three), B the kapi serving ``DIR`` (serve, its descendants, PostgreSQL
and Redis). kapi is warmed first as ``kbench_table.py`` does (every API
process starts its watch cache; a short create run opens the request threads'
connections), so that the processes kbench counts are all the ones that will
work. Prints kbench's comparison table (B/A per metric; medians of the rounds).
Extra arguments after ``--`` go to ``kbench.py compare`` (``--benches``,
``--set``, ``--quick``...).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from kbench_table import _find_kbench, server_pids, warm_watch_caches, write_kubeconfig


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="kapi's data directory")
    parser.add_argument("--kube-work-dir", type=Path, required=True, help="kube_reference.py's --work-dir")
    parser.add_argument("--kube-pids", help="default: read from KDIR/pids.json")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--kbench", default=_find_kbench())
    parser.add_argument("--python", default="/tmp/kbench-venv/bin/python")
    parser.add_argument("--out")
    parser.add_argument("rest", nargs=argparse.REMAINDER)
    args = parser.parse_args()

    kube_pids = args.kube_pids or ",".join(
        map(str, json.loads((args.kube_work_dir / "pids.json").read_text())["pids"])
    )
    kapi_kubeconfig = write_kubeconfig(args.data_dir)
    warm_watch_caches(kapi_kubeconfig)
    subprocess.run(
        [args.python, args.kbench, "create", "--quick", "--settle-max", "0", "--kubeconfig", kapi_kubeconfig],
        check=True, capture_output=True,
    )
    kapi_pids = ",".join(map(str, server_pids(args.data_dir)))
    cmd = [
        args.python, args.kbench, "compare",
        "--a", str(args.kube_work_dir / "kubeconfig"), "--a-pids", kube_pids,
        "--b", kapi_kubeconfig, "--b-pids", kapi_pids,
        "--rounds", str(args.rounds),
    ]
    if args.out:
        cmd += ["--out", args.out]
    rest = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
    return subprocess.run(cmd + rest).returncode


if __name__ == "__main__":
    sys.exit(main())
