"""Git over HTTP under load and abuse (``sync.gitbackend``), on a server whose
push limit is 4 MiB (``KAPI_GIT_MAX_PUSH_BYTES``):

- a real ``git push`` over the limit is refused with ``remote:`` lines git
  prints, nothing of it lands, and the repository takes pushes afterwards;
- a 1 GiB push, generated on the fly and never stored, is refused and the API
  processes' peak memory does not grow with it (bodies are streamed);
- a push that stalls mid-body has its ``git http-backend`` killed at
  ``KAPI_GIT_HTTP_TIMEOUT_SECONDS`` (here 5 s), and the server goes on serving;
- a tiny push that unpacks to a huge tree (one blob, many files) is refused
  before anything is written (``KAPI_SYNC_MAX_CHECKOUT_BYTES``, here 64 MiB);
- two pushes racing to one branch: exactly one wins, the repository stays sound;
- a user without rights gets the same 403 for an existing and a missing
  repository (RBAC before lookup, as kube-apiserver)."""

from __future__ import annotations

import http.client
import os
import ssl
import subprocess
import threading
import zlib
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import pytest
from kapi_testserver import serving
from sync_gitops import Work, create, unique, wait_for
from user_kubeconfigs import new_user

API = "sync.kapi.dev/v1"
LIMIT = 4 << 20
#: Every git process of this server is killed after TIMEOUT seconds: the
#: stalled push waits it out, the others (each git well under 2 s here, a
#: tree bomb's pre-receive check included) must not come near it.
TIMEOUT = 5
CHECKOUT = 64 << 20


@pytest.fixture(scope="module")
def server():
    yield from serving({**os.environ, "KAPI_GIT_MAX_PUSH_BYTES": str(LIMIT),
                        "KAPI_GIT_HTTP_TIMEOUT_SECONDS": str(TIMEOUT),
                        "KAPI_SYNC_MAX_CHECKOUT_BYTES": str(CHECKOUT)})


def _hosted(server, ns: str, name: str = "app", validate: bool = True) -> None:
    create(server,
           {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
           {"apiVersion": API, "kind": "GitRepository", "metadata": {"name": name, "namespace": ns},
            "spec": {"validateOnPush": validate}})


def _branch(server, ns: str, name: str = "app") -> str:
    repo = server.data_dir / "git" / ns / f"{name}.git"
    done = subprocess.run(["git", "rev-parse", "--verify", "-q", "refs/heads/main"], cwd=repo,
                          capture_output=True, text=True)
    return done.stdout.strip()


def test_a_push_over_the_limit_is_refused_with_a_clear_remote_line(server, tmp_path):
    ns = unique("bigpush")
    _hosted(server, ns)
    work = Work(server, ns, "app", tmp_path / "work")
    work.write("cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "small"}})
    work.push("small")
    before = _branch(server, ns)
    (work.path / "blob.bin").write_bytes(os.urandom(LIMIT + (2 << 20)))  # incompressible
    done = work.push("too big", check=False)
    assert done.returncode != 0
    assert (f"remote: kapi: push refused: it is larger than this server's limit of {LIMIT} bytes "
            "(KAPI_GIT_MAX_PUSH_BYTES)") in done.stderr, done.stderr
    assert "[remote rejected] HEAD -> main (push too large)" in done.stderr, done.stderr
    repo = server.data_dir / "git" / ns / "app.git"
    assert _branch(server, ns) == before
    assert not list((repo / "objects").glob("incoming-*"))  # the quarantine went with git
    # The repository is unharmed and takes an ordinary push.
    work.git("reset", "-q", "--hard", "HEAD~1")
    work.write("cm2.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "small2"}})
    work.push("small again")
    assert _branch(server, ns) == work.git("rev-parse", "HEAD").stdout.strip()


def test_a_small_push_that_unpacks_to_a_huge_tree_is_refused(server, tmp_path):
    ns = unique("bomb")
    _hosted(server, ns)
    create(server, {"apiVersion": API, "kind": "Sync", "metadata": {"name": "app", "namespace": ns},
                    "spec": {"sourceRef": {"name": "app"}}})
    work = Work(server, ns, "app", tmp_path / "work")
    same = b"\0" * (1 << 20)
    for i in range(80):  # 80 MiB unpacked, one blob of a few KiB in the push
        (work.path / f"f{i}.bin").write_bytes(same)
    done = work.push("a tree bomb", check=False)
    assert done.returncode != 0
    head = work.git('rev-parse', 'HEAD').stdout[:12]
    assert (f"remote: kapi: cannot read revision {head}: revision {head} is "
            f"{80 << 20} bytes unpacked, over the limit of {CHECKOUT} (KAPI_SYNC_MAX_CHECKOUT_BYTES)") in done.stderr, \
        done.stderr
    assert "push to branch main rejected" in done.stderr
    assert _branch(server, ns) == ""
    assert not list((server.data_dir / "sync" / "checkouts" / ns).glob("*/*/f0.bin"))


def _peak_rss(server) -> dict[int, int]:
    """VmHWM (peak resident memory, bytes) of every process of the server."""
    out = {}
    for proc in [psutil.Process(server.process.pid), *psutil.Process(server.process.pid).children(recursive=True)]:
        try:
            for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    out[proc.pid] = int(line.split()[1]) * 1024
        except OSError:
            pass
    return out


def _object_header(kind: int, size: int) -> bytes:
    """A pack entry's type and size (git's variable-length encoding)."""
    out = bytearray([(kind << 4) | (size & 0x0F)])
    size >>= 4
    while size:
        out[-1] |= 0x80
        out.append(size & 0x7F)
        size >>= 7
    return bytes(out)


def test_a_1gib_push_is_refused_and_memory_stays_bounded(server):
    """The body is generated as it is sent (1 GiB, chunked, never stored): the
    answer is a receive-pack refusal, and no process of the server grows its
    peak memory by anything like the body's size."""
    ns = unique("gigpush")
    _hosted(server, ns)
    total = 1 << 30
    zero = "0" * 40
    command = f"{zero} {'1' * 40} refs/heads/main\0report-status side-band-64k agent=test\n".encode()
    blob = 1 << 20
    count = total // blob
    head = b"%04x" % (len(command) + 4) + command + b"0000" + b"PACK" + (2).to_bytes(4, "big") + count.to_bytes(4, "big")
    block = bytearray(os.urandom(blob))

    def body():
        """A well-formed pack of ``count`` distinct 1 MiB blobs, made as it goes."""
        yield head
        for index in range(count):
            block[:8] = index.to_bytes(8, "big")
            yield _object_header(3, blob) + zlib.compress(bytes(block), 0)

    before = _peak_rss(server)
    parts = urlsplit(server.url)
    context = ssl.create_default_context(cafile=str(server.ca_path))
    conn = http.client.HTTPSConnection(parts.hostname, parts.port, context=context, timeout=300)
    conn.request("POST", f"/git/{ns}/app.git/git-receive-pack", body=body(), encode_chunked=True, headers={
        "Authorization": f"Bearer {server.token}",
        "Content-Type": "application/x-git-receive-pack-request",
        "Accept": "application/x-git-receive-pack-result"})
    response = conn.getresponse()
    answer = response.read()
    conn.close()
    assert response.status == 200
    assert response.getheader("Content-Type") == "application/x-git-receive-pack-result"
    assert b"kapi: push refused: it is larger than this server's limit" in answer
    assert b"ng refs/heads/main push too large" in answer
    after = _peak_rss(server)
    growth = max(after[pid] - before.get(pid, 0) for pid in after)
    assert growth < 128 << 20, f"a server process's peak memory grew by {growth} bytes"
    assert _branch(server, ns) == ""


def _backends(server, ns: str) -> list[psutil.Process]:
    out = []
    for proc in psutil.Process(server.process.pid).children(recursive=True):
        try:
            if proc.cmdline()[:2] == ["git", "http-backend"] and ns in proc.environ().get("PATH_INFO", ""):
                out.append(proc)
        except psutil.Error:
            pass
    return out


def test_a_stalled_push_is_killed_at_the_timeout(server, tmp_path):
    ns = unique("stall")
    _hosted(server, ns)
    command = f"{'0' * 40} {'1' * 40} refs/heads/main\0report-status side-band-64k\n".encode()
    parts = urlsplit(server.url)
    context = ssl.create_default_context(cafile=str(server.ca_path))
    conn = http.client.HTTPSConnection(parts.hostname, parts.port, context=context, timeout=120)
    conn.putrequest("POST", f"/git/{ns}/app.git/git-receive-pack")
    for key, value in (("Authorization", f"Bearer {server.token}"), ("Transfer-Encoding", "chunked"),
                       ("Content-Type", "application/x-git-receive-pack-request")):
        conn.putheader(key, value)
    conn.endheaders()
    piece = b"%04x" % (len(command) + 4) + command + b"0000PACK"
    conn.send(b"%x\r\n%s\r\n" % (len(piece), piece))  # ... and nothing more
    try:
        wait_for(lambda: _backends(server, ns), timeout=30, what="git http-backend to start")
        wait_for(lambda: not _backends(server, ns), timeout=TIMEOUT + 30, what="the stalled git to be killed")
    finally:
        conn.close()
    # The server is unharmed: the repository takes a push.
    work = Work(server, ns, "app", tmp_path / "work")
    work.write("cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "after"}})
    work.push("after the stall")
    assert _branch(server, ns) == work.git("rev-parse", "HEAD").stdout.strip()


def test_concurrent_pushes_to_one_branch_are_serialised(server, tmp_path):
    ns = unique("race")
    _hosted(server, ns)
    first = Work(server, ns, "app", tmp_path / "first")
    first.write("cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "base"}})
    first.push("base")
    second = Work(server, ns, "app", tmp_path / "second")
    results: dict[str, subprocess.CompletedProcess] = {}
    for work, label in ((first, "first"), (second, "second")):
        work.write("cm.yaml", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "base"},
                               "data": {"by": label}})
        work.git("add", "-A")
        work.git("commit", "-q", "-m", label)
    barrier = threading.Barrier(2)

    def push(work: Work, label: str) -> None:
        barrier.wait()
        results[label] = work.git("push", "origin", "HEAD:main", check=False)

    threads = [threading.Thread(target=push, args=(w, label)) for w, label in ((first, "first"), (second, "second"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    codes = sorted(r.returncode for r in results.values())
    assert codes[0] == 0 and codes[1] != 0, {k: (r.returncode, r.stderr) for k, r in results.items()}
    winner = next(label for label, r in results.items() if r.returncode == 0)
    loser = next(label for label, r in results.items() if r.returncode != 0)
    assert "rejected" in results[loser].stderr or "failed" in results[loser].stderr
    head = (first if winner == "first" else second).git("rev-parse", "HEAD").stdout.strip()
    assert _branch(server, ns) == head
    repo = server.data_dir / "git" / ns / "app.git"
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=repo, capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr


def test_the_git_endpoint_does_not_reveal_repositories_to_unauthorized_users(server):
    ns = unique("enum")
    _hosted(server, ns)
    _, token = new_user(server, "stranger")
    parts = urlsplit(server.url)
    context = ssl.create_default_context(cafile=str(server.ca_path))

    def get(name: str) -> tuple[int, str]:
        conn = http.client.HTTPSConnection(parts.hostname, parts.port, context=context, timeout=30)
        conn.request("GET", f"/git/{ns}/{name}.git/info/refs?service=git-upload-pack",
                     headers={"Authorization": f"Bearer {token}"})
        response = conn.getresponse()
        text = response.read().decode()
        conn.close()
        return response.status, text.replace(name, "NAME")

    existing, missing = get("app"), get("nothere")
    assert existing[0] == 403
    assert existing == missing
    assert "cannot get resource" in existing[1]
