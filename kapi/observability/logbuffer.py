"""The log handler: request lines written in batches, everything else at once.

An API process logs one line per request (``kapi.request``). Written by
``logging.StreamHandler``, each line was a ``write`` and a flush of its own:
a system call, and under Docker a wake-up of the log collector, per request.
nginx's ``access_log ... buffer= flush=`` is the model: request lines wait in
memory until ``KAPI_LOG_BUFFER_BYTES`` (64 KiB) have gathered or
``KAPI_LOG_FLUSH_MS`` (200 ms) have passed since the first of them, and go
out in one ``write``. Any other record (a warning, a task's line) writes the
waiting lines and itself at once, so lines stay in the order they were
logged; so does the end of the process (``logging.shutdown``). A process
killed outright loses at most that last fraction of a second of request
lines, as nginx does; ``KAPI_LOG_FLUSH_MS=0`` writes every line at once.

The flushing thread exists only while lines wait: an idle server has none
that wakes.
"""

from __future__ import annotations

import logging
import os
import threading

__all__ = ["BufferedStreamHandler"]

#: Loggers whose records may wait in the buffer.
BUFFERED_LOGGERS = frozenset({"kapi.request"})


class BufferedStreamHandler(logging.StreamHandler):
    def __init__(self, stream=None, *, flush_ms: float | None = None, max_bytes: int | None = None) -> None:
        super().__init__(stream)
        env = os.environ.get
        self.delay = (float(env("KAPI_LOG_FLUSH_MS", "200")) if flush_ms is None else flush_ms) / 1000.0
        self.max_bytes = int(env("KAPI_LOG_BUFFER_BYTES", "65536")) if max_bytes is None else max_bytes
        self._pending: list[str] = []
        self._size = 0
        self._pid = os.getpid()
        self._timer: threading.Timer | None = None

    def emit(self, record: logging.LogRecord) -> None:
        # Handler.handle holds self.lock around emit.
        try:
            line = self.format(record) + self.terminator
            if self._pid != os.getpid():
                # A forked child: the waiting lines are the parent's to write.
                self._pid, self._pending, self._size, self._timer = os.getpid(), [], 0, None
            self._pending.append(line)
            self._size += len(line)
            if record.name not in BUFFERED_LOGGERS or self.delay <= 0 or self._size >= self.max_bytes:
                self._write()
            elif self._timer is None:
                self._timer = threading.Timer(self.delay, self._flush_later)
                self._timer.daemon = True
                self._timer.start()
        except RecursionError:
            raise
        except Exception:
            self.handleError(record)

    def flush(self) -> None:
        self.acquire()
        try:
            if self._pid == os.getpid():
                self._write()
            elif self.stream is not None and hasattr(self.stream, "flush"):
                self.stream.flush()
        finally:
            self.release()

    def _flush_later(self) -> None:
        try:
            self.flush()
        except (OSError, ValueError):
            pass  # the stream is gone (the process is ending): nothing to write to

    def _write(self) -> None:
        """Write what waits (the lock held)."""
        timer, self._timer = self._timer, None
        if timer is not None and timer is not threading.current_thread():
            timer.cancel()
        if self._pending:
            data = "".join(self._pending)
            self._pending.clear()
            self._size = 0
            self.stream.write(data)
        if self.stream is not None and hasattr(self.stream, "flush"):
            self.stream.flush()
