"""Git over HTTP, streamed (issue 14): a fresh ``serve`` with the default push
limit (100 MiB, ``KAPI_GIT_MAX_PUSH_BYTES``); one hosted repository. Prints,
for each case, the wall time, the server's CPU (every process of ``serve``)
and the largest growth of any server process's peak memory (VmHWM):

- a real ``git push`` of a commit with a 50 MiB incompressible file (accepted);
- a real ``git clone`` of it;
- a generated 1 GiB push (a well-formed pack made on the fly, never stored),
  refused at the limit; the client sends it all, the server discards the rest.

    python bench/git_push_stream.py
"""

from __future__ import annotations

import http.client
import json
import os
import ssl
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from urllib.parse import urlsplit

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "bench"))

from _load import server  # noqa: E402


def _procs(srv) -> list[psutil.Process]:
    top = psutil.Process(srv.process.pid)
    return [top, *top.children(recursive=True)]


def _snapshot(srv) -> tuple[float, dict[int, int]]:
    cpu, peaks = 0.0, {}
    for proc in _procs(srv):
        try:
            times = proc.cpu_times()
            cpu += times.user + times.system + times.children_user + times.children_system
            for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peaks[proc.pid] = int(line.split()[1]) * 1024
        except (psutil.Error, OSError):
            pass
    return cpu, peaks


def _measure(label: str, srv, action) -> None:
    cpu, peaks = _snapshot(srv)
    wall = time.perf_counter()
    action()
    wall = time.perf_counter() - wall
    cpu2, peaks2 = _snapshot(srv)
    growth = max((peaks2[p] - peaks.get(p, 0) for p in peaks2), default=0)
    print(f"{label:<34} wall {wall:6.2f} s   server cpu {cpu2 - cpu:6.2f} s   "
          f"peak memory growth {growth / 2**20:6.1f} MiB", flush=True)


def _object_header(kind: int, size: int) -> bytes:
    out = bytearray([(kind << 4) | (size & 0x0F)])
    size >>= 4
    while size:
        out[-1] |= 0x80
        out.append(size & 0x7F)
        size >>= 7
    return bytes(out)


def _generated_push(target, ns: str) -> None:
    blob, count = 1 << 20, 1024
    command = f"{'0' * 40} {'1' * 40} refs/heads/big\0report-status side-band-64k\n".encode()
    head = b"%04x" % (len(command) + 4) + command + b"0000PACK" + (2).to_bytes(4, "big") + count.to_bytes(4, "big")
    block = bytearray(os.urandom(blob))

    def body():
        yield head
        for index in range(count):
            block[:8] = index.to_bytes(8, "big")
            yield _object_header(3, blob) + zlib.compress(bytes(block), 0)

    parts = urlsplit(target.url)
    conn = http.client.HTTPSConnection(parts.hostname, parts.port, timeout=600,
                                       context=ssl.create_default_context(cafile=target.ca_path))
    conn.request("POST", f"/git/{ns}/app.git/git-receive-pack", body=body(), encode_chunked=True,
                 headers={"Authorization": f"Bearer {target.token}",
                          "Content-Type": "application/x-git-receive-pack-request"})
    answer = conn.getresponse().read()
    conn.close()
    assert b"push too large" in answer, answer[:300]


def main() -> None:
    with server() as (target, srv):
        _run(target, srv)


def _run(target, srv) -> None:
    ns = "bench-git"
    docs = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
            {"apiVersion": "sync.kapi.dev/v1", "kind": "GitRepository",
             "metadata": {"name": "app", "namespace": ns}, "spec": {"validateOnPush": False}}]
    srv.kubectl("apply", "-f", "-", input="\n---\n".join(json.dumps(d) for d in docs))
    host = target.url.removeprefix("https://")
    remote = f"https://kapi:{target.token}@{host}/git/{ns}/app.git"
    env = {**os.environ, "GIT_SSL_CAINFO": target.ca_path, "GIT_TERMINAL_PROMPT": "0",
           "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        work.mkdir()

        def git(*args, cwd=work):
            subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)

        git("init", "-q", "--initial-branch=main")
        (work / "blob.bin").write_bytes(os.urandom(50 << 20))
        git("add", "-A")
        git("commit", "-q", "-m", "50 MiB")
        git("remote", "add", "origin", remote)
        _measure("git push, 50 MiB", srv, lambda: git("push", "-q", "origin", "HEAD:main"))
        _measure("git clone, 50 MiB", srv, lambda: git("clone", "-q", remote, str(Path(tmp) / "clone"),
                                                        cwd=tmp))
        _measure("generated 1 GiB push (refused)", srv, lambda: _generated_push(target, ns))


if __name__ == "__main__":
    main()
