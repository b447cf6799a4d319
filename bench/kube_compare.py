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

kbench counts the CPU of the processes it is given when it starts. kapi's
database pool opens connections as load needs them, and each is a new
PostgreSQL backend that kbench does not see: after a warm-up of 300 creates,
a run of 4,000 left a fifth of kapi's CPU in backends opened during it
(session 26). So the warm-up is 2,000 creates and short update, apply and
watch-consistency runs, for the pools to reach their size, and at the end
this prints the CPU of kapi's processes that kbench did not count (new ones,
and ended ones reaped by their parents), against what it counted: kbench's
CPU figures for kapi are that much low.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from kbench_table import _find_kbench, server_pids, warm_watch_caches, write_kubeconfig
from server_cpu import cpu_seconds


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
    warm_ups = (["create", "-n", "2000"], ["update", "--quick"], ["apply", "--quick"], ["watch-consistency", "--quick"])
    for warm_up in warm_ups:
        subprocess.run(
            [args.python, args.kbench, *warm_up, "--settle-max", "0", "--kubeconfig", kapi_kubeconfig],
            check=True, capture_output=True,
        )
    listed = server_pids(args.data_dir)
    kapi_pids = ",".join(map(str, listed))
    before = {pid: (_cpu(pid), _cpu(pid, children=True)) for pid in listed}
    cmd = [
        args.python, args.kbench, "compare",
        "--a", str(args.kube_work_dir / "kubeconfig"), "--a-pids", kube_pids,
        "--b", kapi_kubeconfig, "--b-pids", kapi_pids,
        "--rounds", str(args.rounds),
    ]
    if args.out:
        cmd += ["--out", args.out]
    rest = args.rest[1:] if args.rest[:1] == ["--"] else args.rest
    code = subprocess.run(cmd + rest).returncode
    counted = sum(_cpu(pid) - before[pid][0] for pid in listed)
    ended = sum(_cpu(pid, children=True) - before[pid][1] for pid in listed)
    new = sum(_cpu(pid) + _cpu(pid, children=True) for pid in set(server_pids(args.data_dir)) - set(listed))
    unseen = ended + new
    print(
        f"kapi CPU kbench did not count: {unseen:.2f} s (new processes {new:.2f} s, ended {ended:.2f} s)"
        f" against {counted:.2f} s it counted ({100 * unseen / counted if counted else 0:.1f}%),"
        " over the whole compare (warm-ups and clean-ups included)"
    )
    return code



def _cpu(pid: int, children: bool = False) -> float:
    return cpu_seconds(f"/proc/{pid}/stat", children=children)

if __name__ == "__main__":
    sys.exit(main())
