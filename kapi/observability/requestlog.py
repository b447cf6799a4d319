"""The request log line, without the logging machinery's per-record work.

Every API request logs one line to ``kapi.request``. Through ``Logger.info``
that line cost about 50 us of a request thread's CPU (measured in context:
a ``LogRecord`` and its twenty attributes, the walk over the loggers and
their filters, the handler's lock and filters, the formatter's ``datetime``):
about a twentieth of a create. When ``kapi.request`` is logged as kapi
configures it (``settings.LOGGING``: its records reach exactly one handler,
the ``BufferedStreamHandler`` with the JSON ``StructuredFormatter``, through
no filter), :func:`write` formats the same JSON line itself and hands it to
that handler. Any other configuration (another handler or a filter added, a
terminal's plain lines, the level raised) gets ``Logger.info`` as before.
"""

from __future__ import annotations

import logging

from kapi.clock import now_rfc3339_milli
from kapi.observability.logbuffer import BufferedStreamHandler
from kapi.observability.logs import StructuredFormatter, json_line

__all__ = ["LOGGER", "write"]

LOGGER = "kapi.request"
log = logging.getLogger(LOGGER)


def _direct_handler() -> BufferedStreamHandler | None:
    """The one handler the logger's INFO records reach, if :func:`write` may
    write to it directly; else None. (Whether INFO is enabled at all is
    :func:`write`'s to ask.)"""
    found = None
    logger = log
    while logger is not None:
        if logger.filters or logger.disabled:
            return None
        for handler in logger.handlers:
            if found is not None:
                return None
            found = handler
        if not logger.propagate:
            break
        logger = logger.parent
    if (
        type(found) is not BufferedStreamHandler
        or found.filters
        or found.level > logging.INFO
        or type(found.formatter) is not StructuredFormatter
        or not found.formatter.json
    ):
        return None
    return found


def write(fields: dict) -> None:
    """Log the request line with ``fields`` (which carry ``requestID``)."""
    if not log.isEnabledFor(logging.INFO):
        return
    handler = _direct_handler()
    if handler is None:
        log.info("request", extra={"fields": fields})
        return
    handler.emit_formatted(json_line(now_rfc3339_milli(), "info", LOGGER, "request", fields))
