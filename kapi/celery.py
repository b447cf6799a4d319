"""The Celery application that runs kapi's workers (lifecycle, garbage collection, sync)."""

import os
import sys
import warnings

from celery import Celery, signals
from celery.exceptions import SecurityWarning
from django.db import close_old_connections

from kapi.runtime.parent import follow_serve

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")

app = Celery("kapi")
app.config_from_object("django.conf:settings", namespace="CELERY")
# JSON only, whatever the settings say: no pickle ever reaches a worker. That
# is what makes a worker running as root (a container, the embedded setup of
# `serve`) safe, so Celery's start-up warning about it says nothing useful here
# (Celery itself refuses root only when pickle is accepted).
app.conf.accept_content = ["json"]
app.conf.task_serializer = "json"
app.conf.result_serializer = "json"
warnings.filterwarnings(
    "ignore", message="You're running the worker with superuser privileges", category=SecurityWarning
)
# Celery's Django fix-up closes every database connection before and after
# each task unless CELERY_DB_REUSE_MAX says otherwise, so each task (a feed
# run under a stream of deletes: tens a second) opened a new PostgreSQL
# connection: a backend forked and its caches warmed again, the prepared
# statements lost. Tasks get Django's request semantics instead (below): a
# connection is kept for its CONN_MAX_AGE and closed once an error left it
# unusable or a transaction was left open; its health is checked when the
# next task first uses it.
app.conf.CELERY_DB_REUSE_MAX = sys.maxsize // 4
app.autodiscover_tasks()
app.autodiscover_tasks(["kapi.controllers"])


@signals.worker_init.connect
@signals.beat_init.connect
def _follow_serve(**kwargs) -> None:
    """The worker's and beat's main processes stop if serve dies (kapi.runtime.parent)."""
    follow_serve()



@signals.task_prerun.connect
@signals.task_postrun.connect
def _close_old_connections(**kwargs) -> None:
    close_old_connections()


__all__ = ["app"]
