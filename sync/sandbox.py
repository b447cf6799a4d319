"""Running an untrusted build (``kubectl kustomize``) in a box.

A repository decides what kustomize reads and how much it computes, so a build
runs with:

- a **scrubbed environment**: an empty ``HOME``, a ``PATH`` with nothing in it
  (the binary is run by its absolute path: no ``git``, ``ssh`` or ``helm``), git and
  ssh told to fail (``GIT_SSH_COMMAND=false``, no askpass, no config), and every
  proxy variable pointed at a closed port, so a network fetch fails even if
  ``sync.kustomize``'s pre-check missed a remote reference;
- **limits**: address space (``RLIMIT_AS``), CPU seconds, files it may write
  (``RLIMIT_FSIZE``), open files; a wall-clock timeout that kills its whole
  process group; and a cap on the bytes of its output, beyond which it is killed;
- **bounded concurrency**: at most ``SYNC_RENDER_CONCURRENCY`` builds at once per
  process (the API process validates pushes with it, the Celery workers
  reconcile); the rest wait for a slot until their own deadline.

Exceptions::

    SandboxError          the build could not finish (message says why)
    └── SandboxTimeout    it ran past its time, or found no slot in time
"""

from __future__ import annotations

import os
import resource
import selectors
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Limits", "Result", "SandboxError", "SandboxTimeout", "limits", "run", "scrubbed_env"]

#: Where proxies point: nothing listens on the discard port of the loopback.
DEAD_PROXY = "http://127.0.0.1:9"


class SandboxError(Exception):
    """The boxed command could not finish; the message says which limit hit."""


class SandboxTimeout(SandboxError):
    """It ran out of time (or waited too long for a slot)."""


@dataclass(frozen=True)
class Limits:
    timeout: float = 60.0
    memory: int = 2 << 30
    output: int = 64 << 20
    concurrency: int = 2


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: bytes
    stderr: bytes


def _setting(name: str, default):
    from django.conf import settings

    return getattr(settings, name, default) if settings.configured else default


def limits() -> Limits:
    """The limits from the server settings (``KAPI_SYNC_RENDER_*``)."""
    base = Limits()
    return Limits(
        timeout=float(_setting("SYNC_RENDER_TIMEOUT_SECONDS", base.timeout)),
        memory=int(_setting("SYNC_RENDER_MEMORY_BYTES", base.memory)),
        output=int(_setting("SYNC_RENDER_MAX_OUTPUT_BYTES", base.output)),
        concurrency=int(_setting("SYNC_RENDER_CONCURRENCY", base.concurrency)),
    )


_slots_lock = threading.Lock()
_slots: dict[int, threading.BoundedSemaphore] = {}


def _slot(concurrency: int) -> threading.BoundedSemaphore:
    with _slots_lock:
        return _slots.setdefault(concurrency, threading.BoundedSemaphore(max(1, concurrency)))


def scrubbed_env(home: Path, network: bool = False) -> dict[str, str]:
    """The whole environment of a boxed build: nothing inherited. With
    ``network`` (an administrator allowed remote bases) git is on the ``PATH``
    and the server's own proxy settings apply, still with no credentials."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin" if network else str(home / "no-bin"),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home),
        "XDG_CACHE_HOME": str(home),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ASKPASS": "false",
        "SSH_ASKPASS": "false",
        "GIT_SSH_COMMAND": "false",
        "NO_PROXY": "",
        "no_proxy": "",
    }
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env[name] = env[name.lower()] = DEAD_PROXY
    if network:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
            for key in (name, name.lower()):
                env[key] = os.environ.get(key, "")
    return env


def _rlimits(memory: int, cpu: int) -> None:
    # Runs in the child between fork and exec: only async-signal-safe work
    # (setrlimit is a plain system call; the module is imported already).
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    resource.setrlimit(resource.RLIMIT_FSIZE, (16 << 20, 16 << 20))
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run(argv: list[str], cwd: Path, deadline: float | None = None, box: Limits | None = None,
        network: bool = False) -> Result:
    """Run ``argv`` in the box; ``deadline`` (``time.time()``) may shorten the
    timeout; ``network``: see ``scrubbed_env``. Raises ``SandboxTimeout`` past the time, ``SandboxError`` past the
    output or memory limit."""
    box = box or limits()
    end = time.time() + box.timeout
    if deadline is not None:
        end = min(end, deadline)
    slot = _slot(box.concurrency)
    if not slot.acquire(timeout=max(0.0, end - time.time())):
        raise SandboxTimeout(f"no render slot free within the time limit ({box.concurrency} builds at once)")
    try:
        with tempfile.TemporaryDirectory(prefix="kapi-render-home-") as home:
            return _run(argv, cwd, end, box, Path(home), network)
    finally:
        slot.release()


def _run(argv: list[str], cwd: Path, end: float, box: Limits, home: Path, network: bool) -> Result:
    cpu = max(1, int(box.timeout) + 1)
    process = subprocess.Popen(
        argv, cwd=cwd, env=scrubbed_env(home, network), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
        preexec_fn=lambda: _rlimits(box.memory, cpu),
    )
    out, err, head = bytearray(), bytearray(), bytearray()
    failure: SandboxError | None = None
    with selectors.DefaultSelector() as sel:
        sel.register(process.stdout, selectors.EVENT_READ, out)
        sel.register(process.stderr, selectors.EVENT_READ, err)
        open_streams = 2
        while open_streams:
            left = end - time.time()
            if left <= 0:
                failure = SandboxTimeout(f"stopped after {box.timeout:g}s (time limit)")
                break
            for key, _ in sel.select(timeout=left):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fileobj)
                    open_streams -= 1
                    continue
                buffer = key.data
                if buffer is err:
                    # Its start (Go's fatal error) and end matter; it must not grow without bound.
                    head += chunk[: 4096 - len(head)]
                    buffer += chunk
                    del buffer[:-65536]
                    continue
                if len(buffer) + len(chunk) > box.output:
                    failure = SandboxError(f"output is over the limit of {box.output} bytes")
                    break
                buffer += chunk
            if failure:
                break
    if failure:
        _kill(process)
        raise failure
    try:
        code = process.wait(timeout=max(0.1, end - time.time()))
    except subprocess.TimeoutExpired:
        _kill(process)
        raise SandboxTimeout(f"stopped after {box.timeout:g}s (time limit)") from None
    finally:
        process.stdout.close()
        process.stderr.close()
    if code in (-signal.SIGXCPU, -signal.SIGKILL):
        raise SandboxTimeout(f"stopped after {box.timeout:g}s of CPU (time limit)")
    if code and _out_of_memory(bytes(head) + bytes(err[-4096:])):
        raise SandboxError(f"out of memory (limit {box.memory} bytes)")
    return Result(code, bytes(out), bytes(err))


def _out_of_memory(stderr: bytes) -> bool:
    """Go's runtime says so in one of these ways when RLIMIT_AS stops it."""
    text = stderr.lower()
    return any(s in text for s in (b"out of memory", b"cannot allocate memory", b"reserve page summary memory",
                                   b"failed to reserve"))


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()
    for stream in (process.stdout, process.stderr):
        if stream and not stream.closed:
            stream.close()
