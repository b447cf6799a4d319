"""The Celery application that runs kapi's workers (lifecycle, garbage collection, sync)."""

import os
import warnings

from celery import Celery, signals
from celery.exceptions import SecurityWarning

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
app.autodiscover_tasks()
app.autodiscover_tasks(["kapi.controllers"])


@signals.worker_init.connect
@signals.beat_init.connect
def _follow_serve(**kwargs) -> None:
    """The worker's and beat's main processes stop if serve dies (kapi.runtime.parent)."""
    follow_serve()

__all__ = ["app"]
