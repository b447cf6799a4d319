"""``kapi.runtime.apiserver``: the API workers are forked from a supervisor that
has imported the application once.

Forking is only safe if the import leaves nothing a child would share by
accident: no thread (a fork keeps only the forking one) and no database
connection (two processes on one socket). The first test holds the import to
that; the second checks that ``serve``'s workers are such forks and serve.
"""

from __future__ import annotations

import json
import os
import socket
import ssl
import subprocess
import sys
import urllib.request

import psutil
from kapi_testserver import ROOT, KapiServer, server_processes

_PROBE = """
import json, threading
import kapi.asgi
from django.db import connections
print(json.dumps({
    "threads": [t.name for t in threading.enumerate()],
    "connections": [c.alias for c in connections.all() if c.connection is not None],
}))
"""


def test_importing_the_application_starts_no_thread_and_connects_nowhere(tmp_path) -> None:
    # A database that refuses: an import that connected would fail here.
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    env = {
        **os.environ,
        "KAPI_DATA_DIR": str(tmp_path / "data"),
        "DATABASE_URL": f"postgresql://kapi@127.0.0.1:{port}/kapi",
        "CELERY_BROKER_URL": f"redis://127.0.0.1:{port}/0",
    }
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"threads": ["MainThread"], "connections": []}


def test_serve_forks_its_api_workers_from_the_supervisor(kapi_server: KapiServer) -> None:
    processes = server_processes(kapi_server)
    supervisors = [p for p in processes if "kapi.runtime.apiserver" in " ".join(p.cmdline())
                   and p.parent() is not None and p.parent().pid == kapi_server.process.pid]
    assert len(supervisors) == 1, [p.cmdline() for p in processes]
    supervisor = supervisors[0]
    workers = [p for p in supervisor.children() if "resource_tracker" not in " ".join(p.cmdline())]
    assert len(workers) == 2, [p.cmdline() for p in workers]
    for worker in workers:
        # A spawned interpreter runs ``multiprocessing.spawn``; a fork keeps
        # the supervisor's command line.
        assert worker.cmdline() == supervisor.cmdline()
        assert worker.status() != psutil.STATUS_ZOMBIE
    context = ssl.create_default_context(cafile=str(kapi_server.ca_path))
    for _ in range(8):  # new connections, spread over the workers' sockets
        with urllib.request.urlopen(kapi_server.url + "/readyz", context=context,
                                    timeout=30) as answer:
            assert answer.status == 200
