"""Beat entries of the lifecycle's safety net (merged into CELERY_BEAT_SCHEDULE).

Writes wake the feed (``wakeup``) and postponed work arms a timer
(``kapi.duetimer``): these only catch a message lost with a worker or broker.

``expires`` drops sweeps that waited too long in the queue (workers down), so
they do not pile up."""

__all__ = ["BEAT_SCHEDULE"]

BEAT_SCHEDULE = {
    "kapi-lifecycle-sweep": {
        "task": "kapi.lifecycle.sweep",
        "schedule": 30.0,
        "options": {"expires": 60},
    },
    "kapi-lifecycle-resync": {
        "task": "kapi.lifecycle.resync",
        "schedule": 60.0,
        "options": {"expires": 120},
    },
}
