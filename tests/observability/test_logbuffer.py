"""Request lines are written in batches; every other line at once, in order."""

from __future__ import annotations

import io
import logging
import threading
import time

from kapi.observability.logbuffer import BufferedStreamHandler


class CountingStream(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def write(self, s: str) -> int:
        self.writes += 1
        return super().write(s)


def _record(name: str, msg: str, level: int = logging.INFO) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, msg, (), None)


def _handler(**kw) -> tuple[BufferedStreamHandler, CountingStream]:
    stream = CountingStream()
    handler = BufferedStreamHandler(stream, **kw)
    handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
    return handler, stream


def test_request_lines_wait_and_another_record_writes_them_first() -> None:
    handler, stream = _handler(flush_ms=60_000)
    for i in range(3):
        handler.handle(_record("kapi.request", f"req {i}"))
    assert stream.getvalue() == ""
    handler.handle(_record("kapi.storage", "disk full", logging.WARNING))
    assert stream.getvalue().splitlines() == [
        "kapi.request req 0", "kapi.request req 1", "kapi.request req 2", "kapi.storage disk full",
    ]
    assert stream.writes == 1


def test_a_full_buffer_is_written_in_one_write() -> None:
    handler, stream = _handler(flush_ms=60_000, max_bytes=100)
    for i in range(20):
        handler.handle(_record("kapi.request", f"request line {i:02d}"))
    written = stream.getvalue()
    lines = written.splitlines()
    assert len(lines) > 10
    assert lines == [f"kapi.request request line {i:02d}" for i in range(len(lines))]
    assert stream.writes <= len(written) // 100  # every write carried at least 100 bytes


def test_waiting_lines_go_out_by_themselves() -> None:
    handler, stream = _handler(flush_ms=20)
    handler.handle(_record("kapi.request", "alone"))
    deadline = time.monotonic() + 10
    while stream.getvalue() == "" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stream.getvalue() == "kapi.request alone\n"


def test_flush_writes_what_waits_and_zero_delay_writes_at_once() -> None:
    handler, stream = _handler(flush_ms=60_000)
    handler.handle(_record("kapi.request", "last words"))
    handler.flush()  # what logging.shutdown does at exit
    assert stream.getvalue() == "kapi.request last words\n"
    eager, eager_stream = _handler(flush_ms=0)
    eager.handle(_record("kapi.request", "now"))
    assert eager_stream.getvalue() == "kapi.request now\n"


def _flushers() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "kapi-log-flusher")


def _wait_for(stream: CountingStream, text: str) -> None:
    deadline = time.monotonic() + 10
    while stream.getvalue() != text and time.monotonic() < deadline:
        time.sleep(0.01)
    assert stream.getvalue() == text


def test_one_flusher_writes_batch_after_batch() -> None:
    before = _flushers()
    handler, stream = _handler(flush_ms=20)
    handler.handle(_record("kapi.request", "first"))
    _wait_for(stream, "kapi.request first\n")
    handler.handle(_record("kapi.request", "second"))
    handler.handle(_record("kapi.request", "third"))
    _wait_for(stream, "kapi.request first\nkapi.request second\nkapi.request third\n")
    assert stream.writes == 2
    assert _flushers() == before + 1
