"""API workers on CPUs of their own (``kapi.runtime.affinity``): workers of one
supervisor take different CPUs in turn, a worker that dies frees its CPU for
its replacement, ``auto`` pins only where the workers cover the CPUs, and
``off`` leaves a worker free. The worker processes here are children of the
test (their supervisor); the last test looks at a real ``serve``'s workers."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import psutil
from kapi_testserver import ROOT, KapiServer, server_processes

CPUS = sorted(os.sched_getaffinity(0))

# A worker: pins itself, prints its CPU and its threads' affinities, then
# holds its slot until its stdin closes.
WORKER = """
import os, sys, threading
from kapi.runtime.affinity import pin_worker
threading.Thread(target=threading.Event().wait, daemon=True).start()  # a thread made before
cpu = pin_worker(int(sys.argv[1]))
allowed = sorted({tuple(sorted(os.sched_getaffinity(int(t)))) for t in os.listdir("/proc/self/task")})
print(cpu, allowed, flush=True)
sys.stdin.read()
"""


@contextmanager
def _worker(workers: int, mode: str) -> Iterator[tuple[int | None, list]]:
    env = {**os.environ, "KAPI_API_CPU_AFFINITY": mode}
    process = subprocess.Popen(
        [sys.executable, "-c", WORKER, str(workers)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env,
    )
    try:
        cpu, allowed = process.stdout.readline().split(" ", 1)
        yield (None if cpu == "None" else int(cpu)), ast.literal_eval(allowed)
    finally:
        process.stdin.close()
        process.wait(10)


def test_workers_take_cpus_in_turn_and_every_thread_follows() -> None:
    with _worker(len(CPUS), "on") as (first, first_threads), _worker(len(CPUS), "on") as (second, second_threads):
        assert first == CPUS[0]
        assert second == CPUS[1 % len(CPUS)]
        # Every thread of the worker, also one started before it pinned itself.
        assert first_threads == [(first,)]
        assert second_threads == [(second,)]


def test_a_dead_workers_cpu_goes_to_its_replacement() -> None:
    with _worker(len(CPUS), "on") as (first, _):
        assert first == CPUS[0]
    with _worker(len(CPUS), "on") as (replacement, _):
        assert replacement == CPUS[0]


def test_auto_pins_only_where_the_workers_cover_the_cpus() -> None:
    with _worker(len(CPUS), "auto") as (cpu, threads):
        assert cpu == CPUS[0] and threads == [(cpu,)]
    if len(CPUS) > 1:
        with _worker(len(CPUS) - 1, "auto") as (cpu, threads):
            assert cpu is None and threads == [tuple(CPUS)]


def test_off_leaves_the_worker_free() -> None:
    with _worker(len(CPUS), "off") as (cpu, threads):
        assert cpu is None and threads == [tuple(CPUS)]


def test_serves_api_workers_run_on_cpus_of_their_own(kapi_server: KapiServer) -> None:
    """The session's server (two workers): pinned to different CPUs when the
    machine has no more than two, free otherwise."""
    root = psutil.Process(kapi_server.process.pid)
    workers = [p for p in root.children(recursive=True) if "spawn_main" in _cmdline(p)]
    assert len(workers) == 2
    affinities = sorted(tuple(sorted(w.cpu_affinity())) for w in workers)
    if len(CPUS) <= 2:
        assert affinities == sorted((CPUS[i % len(CPUS)],) for i in range(2))
    else:
        assert affinities == [tuple(CPUS)] * 2


def _cmdline(process: psutil.Process) -> str:
    """A process of the shared server can end between the listing and this
    look (a Celery child, a git the sync ran): it is no API worker."""
    try:
        return " ".join(process.cmdline())
    except psutil.NoSuchProcess:
        return ""


def _policy(pid: int) -> int | None:
    try:
        return os.sched_getscheduler(pid)
    except (ProcessLookupError, PermissionError):
        return None  # ended meanwhile


def test_serve_and_everything_it_started_run_under_sched_batch(kapi_server: KapiServer) -> None:
    """``kapi.runtime.scheduling``: serve, its API workers and their threads,
    Celery, the embedded PostgreSQL (postmaster and backends) and Redis."""
    processes = server_processes(kapi_server)
    names = " ".join(_cmdline(p) for p in processes)
    assert "spawn_main" in names and "celery" in names and "postgres" in names and "redis-server" in names
    workers = [p for p in processes if "spawn_main" in _cmdline(p)]
    threads = [int(t) for w in workers for t in os.listdir(f"/proc/{w.pid}/task")]
    pids = [kapi_server.process.pid] + [p.pid for p in processes] + threads
    policies = {_policy(pid) for pid in pids} - {None}
    assert policies == {os.SCHED_BATCH}


def test_kapi_sched_batch_0_keeps_the_default_policy() -> None:
    probe = ("import os; from kapi.runtime.scheduling import use_batch_policy; "
             "print(use_batch_policy(), os.sched_getscheduler(0) == os.SCHED_BATCH)")
    for value, batch in (("0", "False"), ("1", "True")):
        out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True,
                             env={**os.environ, "KAPI_SCHED_BATCH": value}).stdout.split()
        assert out == ["None", batch], value
