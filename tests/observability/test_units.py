"""Log formatting, metric verbs and the request id carried into Celery tasks."""

from __future__ import annotations

import json
import logging
from types import SimpleNamespace

from kapi.observability import tasks
from kapi.observability.context import (
    current_request_id,
    new_request_id,
    set_request_id,
)
from kapi.observability.logs import StructuredFormatter
from kapi.observability.middleware import metric_verb


def _record(msg: str, **fields) -> logging.LogRecord:
    record = logging.LogRecord("kapi.request", logging.INFO, __file__, 1, msg, (), None)
    record.fields = fields
    return record


def test_json_line_has_time_level_and_fields() -> None:
    """Not on a terminal, a record is one JSON object with its fields on top."""
    line = StructuredFormatter(json=True).format(_record("request", code=201, user="u"))
    data = json.loads(line)
    assert data["msg"] == "request" and data["code"] == 201 and data["user"] == "u"
    assert data["level"] == "info" and data["time"].endswith("Z")
    assert "\n" not in line


def test_terminal_line_is_readable() -> None:
    line = StructuredFormatter(json=False).format(_record("request", code=201))
    assert "INFO kapi.request request code=201" in line


def test_current_request_id_is_logged() -> None:
    token = set_request_id("rid-1")
    try:
        data = json.loads(StructuredFormatter(json=True).format(_record("x")))
    finally:
        from kapi.observability.context import reset_request_id

        reset_request_id(token)
    assert data["requestID"] == "rid-1"


def test_request_ids() -> None:
    """A sane client id is kept; anything else is replaced by a UUID."""
    assert new_request_id("abc-123") == "abc-123"
    assert new_request_id("bad id\n") != "bad id\n"
    assert len(new_request_id(None)) == 36
    assert len(new_request_id("x" * 500)) == 36


def test_metric_verbs() -> None:
    assert metric_verb("list") == "LIST"
    assert metric_verb("watch") == "WATCH"
    assert metric_verb("create") == "POST"
    assert metric_verb("patch", "application/apply-patch+yaml") == "APPLY"
    assert metric_verb("patch", "application/merge-patch+json") == "PATCH"


def test_request_id_travels_with_the_task() -> None:
    """Publishing inside a request adds the id as a message header; the worker
    makes it current while the task runs, and forgets it afterwards."""
    headers: dict = {}
    token = set_request_id("rid-task")
    try:
        tasks._carry_request_id(headers=headers)
    finally:
        from kapi.observability.context import reset_request_id

        reset_request_id(token)
    assert json.loads(json.dumps(headers)) == {"kapi_request_id": "rid-task"}
    task = SimpleNamespace(
        name="kapi.test", request=SimpleNamespace(retries=0, **headers)
    )
    tasks._task_started(task_id="t1", task=task)
    assert current_request_id() == "rid-task"
    tasks._task_finished(task_id="t1", task=task, state="SUCCESS")
    assert current_request_id() == ""
