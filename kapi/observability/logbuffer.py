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

One flushing thread per process, started by the first request line, sleeps
on an event while no line waits: an idle server has no thread that wakes.
(It used to be a ``threading.Timer`` per batch: five threads started a
second per process under load, about 1% of the request threads' time under
``py-spy``, for the start's hand-offs of the interpreter lock.)
"""

from __future__ import annotations

import logging
import os
import threading
import time

from kapi import pid

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
        self._pid = pid.current()
        #: Set while lines wait for the flusher (the lock held to change it).
        self._waiting = threading.Event()
        self._flusher_pid = 0

    def emit(self, record: logging.LogRecord) -> None:
        # Handler.handle holds self.lock around emit.
        try:
            self._add(self.format(record) + self.terminator, record.name in BUFFERED_LOGGERS)
        except RecursionError:
            raise
        except Exception:
            self.handleError(record)

    def emit_formatted(self, line: str) -> None:
        """A line of a buffered logger, formatted by its caller as this
        handler's formatter would have (``kapi.observability.requestlog``)."""
        self.acquire()
        try:
            self._add(line + self.terminator, True)
        finally:
            self.release()

    def _add(self, line: str, buffered: bool) -> None:
        """Queue ``line``; write now unless it may wait (the lock held)."""
        if self._pid != pid.current():
            # A forked child: the waiting lines are the parent's to write.
            self._pid, self._pending, self._size = pid.current(), [], 0
            self._waiting = threading.Event()
        self._pending.append(line)
        self._size += len(line)
        if not buffered or self.delay <= 0 or self._size >= self.max_bytes:
            self._write()
        elif not self._waiting.is_set():
            if self._flusher_pid != self._pid:
                self._flusher_pid = self._pid
                threading.Thread(target=self._flush_when_due, args=(self._waiting,),
                                 name="kapi-log-flusher", daemon=True).start()
            self._waiting.set()

    def flush(self) -> None:
        self.acquire()
        try:
            if self._pid == pid.current():
                self._write()
            elif self.stream is not None and hasattr(self.stream, "flush"):
                self.stream.flush()
        finally:
            self.release()

    def _flush_when_due(self, waiting: threading.Event) -> None:
        """The flusher: ``delay`` after lines start to wait, write them."""
        while True:
            waiting.wait()
            time.sleep(self.delay)
            try:
                self.flush()
            except (OSError, ValueError):
                return  # the stream is gone (the process is ending): nothing to write to

    def _write(self) -> None:
        """Write what waits (the lock held)."""
        self._waiting.clear()
        if self._pending:
            data = "".join(self._pending)
            self._pending.clear()
            self._size = 0
            self.stream.write(data)
        if self.stream is not None and hasattr(self.stream, "flush"):
            self.stream.flush()
