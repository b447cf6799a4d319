"""Celery tasks: the request id carried in, one log line and metrics out.

Connected to Celery's signals when Django starts (``KapiConfig.ready``), so
both sides see them: the API process that enqueues (``before_task_publish``
adds the current request id as the ``kapi_request_id`` message header) and the
worker that runs the task (``task_prerun`` makes it current; ``task_postrun``
logs ``kapi.task`` with name, id, outcome, duration and request id, and counts
``kapi_celery_tasks`` / ``kapi_celery_task_duration_seconds``).

A safety-net sweep that found nothing to do calls ``nothing_done()``: its run
is counted but not logged, so an idle server writes no line per sweep.
"""

from __future__ import annotations

import logging
import time

from celery import current_task, signals

from kapi.observability import metrics
from kapi.observability.context import (
    current_request_id,
    reset_request_id,
    set_request_id,
)

__all__ = ["REQUEST_ID_MESSAGE_HEADER", "nothing_done"]

REQUEST_ID_MESSAGE_HEADER = "kapi_request_id"

log = logging.getLogger("kapi.task")

_running: dict[str, tuple[float, object]] = {}
_QUIET = "kapi_nothing_done"


def nothing_done() -> None:
    """The running task found nothing to do: skip its log line if it succeeds."""
    task = current_task
    if task is not None and task.request is not None:
        setattr(task.request, _QUIET, True)


@signals.before_task_publish.connect
def _carry_request_id(headers=None, **kwargs) -> None:
    request_id = current_request_id()
    if request_id and headers is not None and REQUEST_ID_MESSAGE_HEADER not in headers:
        headers[REQUEST_ID_MESSAGE_HEADER] = request_id


@signals.task_prerun.connect
def _task_started(task_id=None, task=None, **kwargs) -> None:
    request_id = getattr(task.request, REQUEST_ID_MESSAGE_HEADER, None) or ""
    if not request_id:
        request_id = (getattr(task.request, "headers", None) or {}).get(
            REQUEST_ID_MESSAGE_HEADER, ""
        )
    _running[task_id] = (time.perf_counter(), set_request_id(request_id or ""))


@signals.task_postrun.connect
def _task_finished(task_id=None, task=None, state=None, **kwargs) -> None:
    started, token = _running.pop(task_id, (None, None))
    if started is None:
        return
    duration = time.perf_counter() - started
    outcome = (state or "UNKNOWN").lower()
    metrics.CELERY_TASKS.labels(task.name, outcome).inc()
    metrics.CELERY_TASK_DURATION.labels(task.name).observe(duration)
    quiet = outcome == "success" and getattr(task.request, _QUIET, False)
    log.log(
        logging.DEBUG if quiet else logging.INFO,
        "task",
        extra={
            "fields": {
                "task": task.name,
                "taskID": task_id,
                "outcome": outcome,
                "duration": round(duration, 6),
                "retries": task.request.retries,
            }
        },
    )
    try:
        reset_request_id(token)
    except ValueError:
        pass  # finished in another context than it started: nothing to undo


@signals.setup_logging.connect
def _use_django_logging(**kwargs) -> None:
    """Keep Django's ``LOGGING`` (structured lines) instead of Celery's own."""
