"""Structured log lines: JSON when the stream is not a terminal.

Every record becomes one line. Records logged with ``extra={"fields": {...}}``
(requests, tasks, reconciles) carry those fields as top-level keys; every line
has ``time`` (RFC 3339, UTC), ``level``, ``logger``, ``msg`` and, inside a
request or a task a request caused, ``requestID``. On a terminal the same
record reads as ``time level logger msg key=value ...`` instead.
"""

from __future__ import annotations

import logging
import sys
from datetime import UTC, datetime

import orjson

from kapi.observability.context import current_request_id

__all__ = ["StructuredFormatter", "fields_of", "json_line"]

# A record carries what the formatter below writes and nothing more (the
# logging HOWTO's "Optimization"): finding the caller's file and line walks
# the stack at every record, and the thread and process names are lookups.
# Every process that logs through LOGGING (API workers, Celery, commands)
# formats with StructuredFormatter, which uses none of them; an API request
# logs one line.
logging._srcfile = None
logging.logThreads = False
logging.logProcesses = False
logging.logMultiprocessing = False


def fields_of(record: logging.LogRecord) -> dict:
    fields = dict(getattr(record, "fields", None) or {})
    request_id = fields.get("requestID") or current_request_id()
    if request_id:
        fields["requestID"] = request_id
    return fields


class StructuredFormatter(logging.Formatter):
    """JSON lines unless ``stream`` (stderr by default) is a terminal."""

    def __init__(self, *args, json: bool | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.json = (not sys.stderr.isatty()) if json is None else json

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
        fields = fields_of(record)
        message = record.getMessage()
        exc = self.formatException(record.exc_info) if record.exc_info else ""
        if not self.json:
            extra = " ".join(f"{k}={v}" for k, v in fields.items())
            line = f"{when} {record.levelname} {record.name} {message} {extra}".rstrip()
            return f"{line}\n{exc}" if exc else line
        return json_line(when.replace("+00:00", "Z"), record.levelname.lower(), record.name, message, fields, exc)


def json_line(when: str, level: str, logger: str, message: str, fields: dict, exc: str = "") -> str:
    """One JSON log line as :class:`StructuredFormatter` writes it (also
    ``kapi.observability.requestlog``'s, which formats without a record)."""
    line = {"time": when, "level": level, "logger": logger, "msg": message, **fields}
    if exc:
        line["exc"] = exc
    return orjson.dumps(line, default=str).decode()
