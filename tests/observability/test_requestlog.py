"""The request line written straight to kapi's handler (``requestlog.write``)
is the line ``Logger.info`` would have written, and any other logging
configuration still goes through ``Logger.info``."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from kapi.observability import requestlog
from kapi.observability.logbuffer import BufferedStreamHandler
from kapi.observability.logs import StructuredFormatter

FIELDS = {
    "user": "alice", "verb": "POST", "group": "", "resource": "configmaps", "subresource": "",
    "namespace": "team-a", "name": "", "path": "/api/v1/namespaces/team-a/configmaps",
    "code": 201, "duration": 0.003141, "requestID": "3f1c8a2e-1b2c-4d5e-8f90-123456789abc",
}


@pytest.fixture
def configured() -> Iterator:
    """A function that makes ``kapi.request`` as settings.LOGGING does (one
    JSON handler, no filter), on a stream of the test's own; called in the
    test's body, after pytest has added its capturing handlers. Restored
    afterwards."""
    logger = logging.getLogger(requestlog.LOGGER)
    saved = logger.level, logger.propagate, logger.handlers[:], logger.filters[:], logger.disabled

    def configure() -> tuple[logging.Logger, BufferedStreamHandler, io.StringIO]:
        stream = io.StringIO()
        handler = BufferedStreamHandler(stream, flush_ms=0)
        handler.setFormatter(StructuredFormatter(json=True))
        logger.setLevel(logging.INFO)
        logger.propagate = False
        logger.handlers[:] = [handler]
        logger.filters[:] = []
        logger.disabled = False
        return logger, handler, stream

    try:
        yield configure
    finally:
        logger.setLevel(saved[0])
        logger.propagate, logger.disabled = saved[1], saved[4]
        logger.handlers[:] = saved[2]
        logger.filters[:] = saved[3]


def _lines(stream: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_the_direct_line_is_the_one_logger_info_writes(configured) -> None:
    logger, handler, stream = configured()
    assert requestlog._direct_handler() is handler
    before = datetime.now(UTC)
    requestlog.write(dict(FIELDS))
    logger.info("request", extra={"fields": dict(FIELDS)})
    direct, logged = _lines(stream)
    assert list(direct) == list(logged)  # the same keys, in the same order
    assert {k: v for k, v in direct.items() if k != "time"} == {k: v for k, v in logged.items() if k != "time"}
    stamps = [datetime.strptime(line["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
              for line in (direct, logged)]
    for stamp in stamps:
        assert len(stamp.isoformat(timespec="milliseconds")) == len(before.isoformat(timespec="milliseconds"))
        assert abs((stamp - before).total_seconds()) < 5


def test_any_other_configuration_goes_through_logger_info(configured) -> None:
    """A filter, a second handler, plain (terminal) lines or a raised level:
    ``write`` leaves the line to logging, which applies them."""
    logger, handler, stream = configured()

    logger.addFilter(lambda record: False)
    assert requestlog._direct_handler() is None
    requestlog.write(dict(FIELDS))
    assert stream.getvalue() == ""
    logger.filters.clear()

    other = io.StringIO()
    second = logging.StreamHandler(other)
    second.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(second)
    assert requestlog._direct_handler() is None
    requestlog.write(dict(FIELDS))
    assert other.getvalue() == "request\n" and len(_lines(stream)) == 1
    logger.removeHandler(second)

    handler.setFormatter(StructuredFormatter(json=False))
    assert requestlog._direct_handler() is None
    requestlog.write(dict(FIELDS))
    assert stream.getvalue().splitlines()[-1].split(" ", 1)[1].startswith("INFO kapi.request request user=alice")
    handler.setFormatter(StructuredFormatter(json=True))

    logger.setLevel(logging.WARNING)
    requestlog.write(dict(FIELDS))
    assert len(stream.getvalue().splitlines()) == 2
