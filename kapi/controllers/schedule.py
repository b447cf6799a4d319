"""Beat entries of the runtime's safety net (merged into CELERY_BEAT_SCHEDULE).

Writes wake the feeds (``feed.wake``) and keys due later arm a timer
(``kapi.duetimer``): these only catch a message lost with a worker or broker.
``expires`` drops sweeps that waited too long in the queue (workers down), so
they do not pile up."""

import os

__all__ = ["BEAT_SCHEDULE"]

BEAT_SCHEDULE = {
    "kapi-controllers-sweep": {
        "task": "kapi.controllers.sweep",
        "schedule": float(os.environ.get("KAPI_CONTROLLERS_SAFETY_SWEEP_SECONDS", "30")),
        "options": {"expires": 60},
    },
    "kapi-controllers-resync": {
        "task": "kapi.controllers.resync",
        "schedule": 60.0,
        "options": {"expires": 120},
    },
}
