"""The Celery application that runs kapi's workers (lifecycle, garbage collection, sync)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")

app = Celery("kapi")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
app.autodiscover_tasks(["kapi.lifecycle"])

__all__ = ["app"]
