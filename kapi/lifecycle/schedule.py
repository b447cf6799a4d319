"""Beat entries of the lifecycle's safety net (merged into CELERY_BEAT_SCHEDULE).

``expires`` drops sweeps that waited too long in the queue (workers down), so
they do not pile up."""

__all__ = ["BEAT_SCHEDULE"]

BEAT_SCHEDULE = {
    "kapi-lifecycle-sweep": {
        "task": "kapi.lifecycle.sweep",
        "schedule": 2.0,
        "options": {"expires": 10},
    },
    "kapi-lifecycle-resync": {
        "task": "kapi.lifecycle.resync",
        "schedule": 15.0,
        "options": {"expires": 30},
    },
}
