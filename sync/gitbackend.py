"""``git http-backend`` for one request: streamed both ways, bounded.

The request body goes to git as it arrives, in 64 KiB pieces (a chunked push
too: without ``CONTENT_LENGTH`` git reads until the end), and git's answer goes
back as it is produced, through a small queue: a clone of any size, or a push
of any size, holds a few hundred KiB of this process's memory at most.

Limits:

- a push (``git-receive-pack``) of more than ``KAPI_GIT_MAX_PUSH_BYTES`` is
  cut off there: git is stopped (its quarantine goes with it, nothing lands)
  and the pusher gets a proper ``receive-pack`` answer, so git prints it:
  ``remote: kapi: push refused: ...`` and ``! [remote rejected] main -> main
  (push too large)``. What the client still sends is discarded by the HTTP
  server, never read here;
- every git process is killed (its whole process group: the hook too) after
  ``KAPI_GIT_HTTP_TIMEOUT_SECONDS``;
- at most ``KAPI_GIT_HTTP_CONCURRENCY`` git processes per API process (the
  others get 503 with ``Retry-After``), so that pushes, whose pre-receive hook
  calls back into the API server, can never take every request thread.

A push's first bytes (its ref updates and push options, ``request_head``) can
be read before git starts: the caller's ``prepare`` decides from them git's
environment for this push, extra time, or a refusal (``PushSetup``; e.g.
``git push -o wait``, ``sync.pushoptions``).

Two pushes to one repository at once are serialised by git itself: each
updates its refs under git's ref lock, comparing the old value, so the second
is refused (``failed to update ref``/``fetch first``), never interleaved.
"""

from __future__ import annotations

import itertools
import os
import queue
import signal
import subprocess
import threading
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from django.http import HttpRequest, HttpResponse, StreamingHttpResponse

__all__ = ["Limits", "PushSetup", "commands", "refusal", "request_head", "serve"]

CHUNK = 65536
#: Chunks of git's answer waiting for the client (backpressure past this).
QUEUE_CHUNKS = 8
_PREFIX = 65536


class Limits:
    """The server settings, read once per request."""

    def __init__(self) -> None:
        from django.conf import settings

        self.max_push = int(getattr(settings, "GIT_MAX_PUSH_BYTES", 100 << 20))
        self.timeout = float(getattr(settings, "GIT_HTTP_TIMEOUT_SECONDS", 600))
        self.concurrency = int(getattr(settings, "GIT_HTTP_CONCURRENCY", 4))


_slots_lock = threading.Lock()
_slots: dict[int, threading.BoundedSemaphore] = {}


def _slot(n: int) -> threading.BoundedSemaphore:
    with _slots_lock:
        return _slots.setdefault(n, threading.BoundedSemaphore(max(1, n)))


def _pkt(data: bytes) -> bytes:
    return b"%04x" % (len(data) + 4) + data


def request_head(prefix: bytes, gzipped: bool = False) -> tuple[list[str], set[str], list[str]]:
    """The refs a push updates, the capabilities it asked for and its push
    options (``git push -o``), from the first bytes of its request: pkt-lines
    "old new ref\\0caps" up to a flush, then, with the ``push-options``
    capability, one pkt-line per option up to a second flush. Options cut off
    by the end of ``prefix`` are not returned."""
    if gzipped:
        try:
            prefix = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(prefix, _PREFIX)
        except zlib.error:
            return [], set(), []
    refs: list[str] = []
    caps: set[str] = set()
    options: list[str] = []
    flushes, pos = 0, 0
    while pos + 4 <= len(prefix) and flushes < 2:
        try:
            size = int(prefix[pos:pos + 4], 16)
        except ValueError:
            break
        if size == 0:
            flushes += 1
            pos += 4
            if "push-options" not in caps:
                break
            continue
        if size < 4 or pos + size > len(prefix):
            break
        line = prefix[pos + 4:pos + size]
        pos += size
        if flushes == 1:
            options.append(line.decode(errors="replace").removesuffix("\n"))
            continue
        if b"\0" in line:
            line, _, rest = line.partition(b"\0")
            caps |= set(rest.decode(errors="replace").split())
        parts = line.decode(errors="replace").split()
        if len(parts) == 3:
            refs.append(parts[2])
    if flushes < 2:
        options = []  # the list did not end within the prefix: not all of it
    return refs, caps, options


def commands(prefix: bytes, gzipped: bool = False) -> tuple[list[str], set[str]]:
    """The refs a push updates and the capabilities it asked for (``request_head``)."""
    refs, caps, _ = request_head(prefix, gzipped)
    return refs, caps


@dataclass
class PushSetup:
    """What a push's first bytes decide before git starts: more environment for
    git (and its hooks), more time, a function to call once the request is
    over, or a refusal (the ``remote:`` message, the reason on each ref)."""

    env: dict[str, str] = field(default_factory=dict)
    extra_seconds: float = 0.0
    release: Callable[[], None] | None = None
    refusal: tuple[str, str] | None = None


def refusal(refs: list[str], caps: set[str], message: str, reason: str) -> bytes:
    """A ``git-receive-pack`` answer refusing every ref: ``message`` on the
    progress band (git prints ``remote: ...``), ``reason`` in the report."""
    report = b""
    if caps & {"report-status", "report-status-v2"}:
        report = _pkt(f"unpack {reason}\n".encode())
        report += b"".join(_pkt(f"ng {ref} {reason}\n".encode()) for ref in refs) + b"0000"
    if not caps & {"side-band-64k", "side-band"}:
        return report
    out = b"".join(_pkt(b"\x02" + line.encode() + b"\n") for line in message.splitlines())
    for start in range(0, len(report), 990):
        out += _pkt(b"\x01" + report[start:start + 990])
    return out + b"0000"


def _body_stream(request: HttpRequest):
    """The raw request body: Django's stream knows its length; without one
    (chunked), the server's input, read until it ends."""
    if request.META.get("CONTENT_LENGTH"):
        return request
    return request.META["wsgi.input"]


def _kill(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _Held:
    """A taken slot, released once whoever finishes first releases it."""

    def __init__(self, semaphore: threading.BoundedSemaphore) -> None:
        self._semaphore = semaphore
        self._lock = threading.Lock()
        self._held = True

    def release(self) -> None:
        with self._lock:
            if self._held:
                self._held = False
                self._semaphore.release()


def serve(request: HttpRequest, env: dict[str, str], *, push: bool, limits: Limits | None = None,
          on_done=None, prepare: Callable[[bytes], PushSetup] | None = None) -> HttpResponse:
    """Run ``git http-backend`` with CGI ``env`` for ``request``. ``on_done(status)``
    runs once git's answer has been produced (e.g. to reconcile after a push);
    ``prepare(first bytes)`` sets up a push before git starts (``PushSetup``)."""
    limits = limits or Limits()
    semaphore = _slot(limits.concurrency)
    if not semaphore.acquire(timeout=10):
        response = HttpResponse("kapi: too many git requests in progress; try again\n", status=503,
                                content_type="text/plain")
        response["Retry-After"] = "5"
        return response
    slot = _Held(semaphore)
    try:
        return _serve(request, env, push, limits, slot, on_done, prepare)
    except BaseException:
        slot.release()
        raise


def _serve(request, env, push, limits, slot, on_done, prepare) -> HttpResponse:
    declared = request.META.get("CONTENT_LENGTH") or ""
    gzipped = request.META.get("HTTP_CONTENT_ENCODING", "").endswith("gzip")
    env = dict(env)
    if declared:
        env["CONTENT_LENGTH"] = declared
    else:
        env.pop("CONTENT_LENGTH", None)
    head, setup = b"", PushSetup()
    over = declared.isdigit() and int(declared) > limits.max_push
    # A push request is never gzipped by git (only fetches are): one that is
    # goes to git unread, as before options existed.
    if push and prepare is not None and request.method == "POST" and not over and not gzipped:
        head = _read_head(request)
        setup = prepare(head)
        if setup.refusal is not None:
            slot.release()
            return _refused(head, gzipped, *setup.refusal)
        env.update(setup.env)
    timeout = limits.timeout + setup.extra_seconds
    try:
        process = subprocess.Popen(["git", "http-backend"], env=env, stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
    except BaseException:
        if setup.release is not None:
            setup.release()
        raise
    released = threading.Event()
    watchdog = threading.Timer(timeout, _kill, (process,))
    watchdog.daemon = True

    def finish() -> None:
        """Once per request: stop git (and its hook) and free the slots."""
        if released.is_set():
            return
        released.set()
        watchdog.cancel()
        _kill(process)
        process.wait()
        slot.release()
        if setup.release is not None:
            setup.release()

    watchdog.start()
    chunks: queue.Queue[bytes | None] = queue.Queue(QUEUE_CHUNKS)

    def pump() -> None:
        """git's stdout into the queue; gives up once the request is finished."""
        def put(item: bytes | None) -> bool:
            while not released.is_set():
                try:
                    chunks.put(item, timeout=0.5)
                    return True
                except queue.Full:
                    continue
            return False

        try:
            while (data := process.stdout.read1(CHUNK)) and put(data):
                pass
        except (OSError, ValueError):
            pass
        finally:
            put(None)
            process.stdout.close()

    threading.Thread(target=pump, daemon=True, name="git-http-backend-out").start()
    try:
        too_large, prefix = _feed(request, process, push, declared, limits.max_push, head)
    except BaseException:  # the client went away mid-body, or worse
        finish()
        raise
    if too_large:
        finish()
        message = (f"kapi: push refused: it is larger than this server's limit of {limits.max_push} bytes "
                   "(KAPI_GIT_MAX_PUSH_BYTES)")
        return _refused(prefix, gzipped, message, "push too large", status=413)
    # -- git's answer: CGI headers, then the body, streamed ------------------
    head, rest, ended = b"", b"", False
    while True:
        data = chunks.get()
        if data is None:
            ended = True
            break
        head += data
        cut = min((i for i in (head.find(b"\r\n\r\n"), head.find(b"\n\n")) if i >= 0), default=-1)
        if cut >= 0:
            sep = 4 if head[cut:cut + 4] == b"\r\n\r\n" else 2
            head, rest = head[:cut], head[cut + sep:]
            break
        if len(head) > _PREFIX:
            break
    if not head:
        finish()
        return HttpResponse("kapi: git stopped before answering (time limit or failure)\n", status=500,
                            content_type="text/plain")
    status, headers = 200, []
    for line in head.decode("latin-1").splitlines():
        key, _, value = line.partition(":")
        if key.lower() == "status":
            status = int(value.strip().split()[0])
        elif key:
            headers.append((key.strip(), value.strip()))

    def body() -> Iterator[bytes]:
        try:
            if rest:
                yield rest
            if not ended:
                while (piece := chunks.get()) is not None:
                    yield piece
            try:
                process.wait(timeout=max(1.0, timeout))
            except subprocess.TimeoutExpired:
                return
            if on_done is not None and process.returncode == 0:
                on_done(status)
        finally:
            finish()

    response = StreamingHttpResponse(body(), status=status)
    response._resource_closers.append(finish)  # a client gone before the first byte
    for key, value in headers:
        response[key] = value
    return response


def _refused(prefix: bytes, gzipped: bool, message: str, reason: str, status: int = 400) -> HttpResponse:
    """A push refused before git saw it: ``refusal`` when the client can read
    one (it then prints ``message``), else ``message`` as plain text."""
    refs, caps = commands(prefix, gzipped)
    body = refusal(refs, caps, message, reason)
    if not body:
        return HttpResponse(message + "\n", status=status, content_type="text/plain")
    response = HttpResponse(body, content_type="application/x-git-receive-pack-result")
    response["Cache-Control"] = "no-cache, max-age=0, must-revalidate"
    return response


def _read_exact(stream, size: int) -> bytes:
    data = bytearray()
    while len(data) < size and (piece := stream.read(size - len(data))):
        data += piece
    return bytes(data)


def _read_head(request: HttpRequest) -> bytes:
    """A push's ref updates and push options (``request_head``), read one
    pkt-line at a time and no further: a client that stops sending after them
    (or sends a large pack) is not waited on here, git reads the rest."""
    stream, head = _body_stream(request), bytearray()
    flushes, options = 0, False
    while len(head) < _PREFIX:
        size = _read_exact(stream, 4)
        head += size
        try:
            length = int(size, 16) if len(size) == 4 else -1
        except ValueError:
            break
        if length == 0:
            flushes += 1
            if flushes == 2 or not options:
                break
            continue
        if length < 4:
            break
        line = _read_exact(stream, length - 4)
        head += line
        if flushes == 0 and b"\0" in line:
            options = b"push-options" in line.partition(b"\0")[2].split()
    return bytes(head)


def _feed(request: HttpRequest, process: subprocess.Popen, push: bool, declared: str,
          max_push: int, head: bytes = b"") -> tuple[bool, bytes]:
    """The request body (``head``, already read, first), to git as it arrives:
    (over the push limit?, its first bytes)."""
    prefix = bytearray()
    too_large = False
    if request.method == "POST":
        stream, sent = _body_stream(request), 0
        if push and declared.isdigit() and int(declared) > max_push:
            prefix += stream.read(min(_PREFIX, int(declared)))
            too_large = True
        else:
            pieces = iter(lambda: stream.read(CHUNK), b"")
            if head:
                pieces = itertools.chain([head], pieces)
            try:
                for data in pieces:
                    sent += len(data)
                    if len(prefix) < _PREFIX:
                        prefix += data[: _PREFIX - len(prefix)]
                    if push and sent > max_push:
                        too_large = True
                        break
                    process.stdin.write(data)
            except (BrokenPipeError, ValueError):
                pass  # git stopped reading: its answer says why
    try:
        process.stdin.close()
    except BrokenPipeError:
        pass
    return too_large, bytes(prefix)
