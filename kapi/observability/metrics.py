"""The metric objects, named as kube-apiserver and Flux name theirs.

A leaf module (it imports nothing of kapi but ``kapi.pid``), so every layer may count: the
request middleware, the watch handler, the watch cache, Celery signals and the
sync reconciler. Values that live in the database or the broker are not counted
here but read at scrape time (:mod:`kapi.observability.collectors`).

With ``PROMETHEUS_MULTIPROC_DIR`` set (``serve`` sets it for every child) each
process writes its samples to files there and ``/metrics`` adds them up, so one
scrape sees every API server process and every Celery worker; gauges say how
to combine processes (``livesum``: sum over living processes).
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram, values

from kapi import pid

__all__ = [
    "CELERY_TASKS",
    "CELERY_TASK_DURATION",
    "LONGRUNNING_REQUESTS",
    "RECONCILE_CONDITION",
    "RECONCILE_DURATION",
    "REQUEST_DURATION",
    "REQUEST_TOTAL",
    "SUSPEND_STATUS",
    "TERMINATED_WATCHERS",
    "WATCH_CACHE_CONSISTENT_READ",
    "WATCH_CACHE_EVENTS_DISPATCHED",
    "WATCH_CACHE_EVENTS_RECEIVED",
]


def _use_cached_pid() -> None:
    """In multiprocess mode, prometheus_client asks ``os.getpid()`` on every
    ``inc``/``set``/``observe`` to notice that the process forked and must
    write files of its own; ``kapi.pid`` answers it without a system call.
    Must run before any value exists: every kapi metric is defined below."""
    if values.ValueClass is not values.MutexValue:
        values.ValueClass = values.MultiProcessValue(pid.current)


_use_cached_pid()

_REQUEST_LABELS = ("verb", "group", "version", "resource", "subresource", "scope", "code")

REQUEST_TOTAL = Counter(
    "apiserver_request_total",
    "Counter of apiserver requests broken out for each verb, group, version, "
    "resource, scope, component, and HTTP response code.",
    _REQUEST_LABELS,
)
REQUEST_DURATION = Histogram(
    "apiserver_request_duration_seconds",
    "Response latency distribution in seconds for each verb, group, version, "
    "resource, subresource, scope and component.",
    ("verb", "group", "version", "resource", "subresource", "scope"),
    # kube's buckets (requestLatencyBuckets), shortened at the top.
    buckets=(0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 5, 10, 30, 60),
)
LONGRUNNING_REQUESTS = Gauge(
    "apiserver_longrunning_requests",
    "Gauge of all active long-running apiserver requests (watches) broken out by "
    "verb, group, version, resource, scope and component.",
    ("verb", "group", "version", "resource", "scope"),
    multiprocess_mode="livesum",
)
WATCH_CACHE_EVENTS_DISPATCHED = Counter(
    "apiserver_watch_cache_events_dispatched",
    "Counter of events dispatched in watch cache broken by resource type.",
    ("group", "resource"),
)
WATCH_CACHE_CONSISTENT_READ = Counter(
    "apiserver_watch_cache_consistent_read",
    "Counter for consistent reads from cache.",
    ("resource", "success", "fallback"),
)
WATCH_CACHE_EVENTS_RECEIVED = Counter(
    "apiserver_watch_cache_events_received",
    "Counter of events received in watch cache broken by resource type.",
    ("group", "resource"),
)
TERMINATED_WATCHERS = Counter(
    "apiserver_terminated_watchers",
    "Counter of watchers closed due to unresponsiveness broken by resource type.",
    ("group", "resource"),
)
CELERY_TASKS = Counter(
    "kapi_celery_tasks",
    "Celery tasks finished, by task name and outcome.",
    ("task", "outcome"),
)
CELERY_TASK_DURATION = Histogram(
    "kapi_celery_task_duration_seconds",
    "Run time of Celery tasks by task name.",
    ("task",),
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
)
RECONCILE_DURATION = Histogram(
    "gotk_reconcile_duration_seconds",
    "The duration in seconds of a GitOps Toolkit resource reconciliation.",
    ("kind", "name", "namespace"),
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
)
RECONCILE_CONDITION = Gauge(
    "gotk_reconcile_condition",
    "The current condition status of a GitOps Toolkit resource reconciliation.",
    ("kind", "name", "namespace", "type", "status"),
    multiprocess_mode="mostrecent",
)
SUSPEND_STATUS = Gauge(
    "gotk_suspend_status",
    "The current suspend status of a GitOps Toolkit resource.",
    ("kind", "name", "namespace"),
    multiprocess_mode="mostrecent",
)
