"""Which API request last wrote an object that workers act on (``WriteOrigin``).

The lifecycle's work items and cursor are the controller runtime's
(``kapi.controllers.models``, ``kapi.models.ChangeFeedCursor``).
"""

from django.db import models

__all__ = ["WriteOrigin"]


class WriteOrigin(models.Model):
    """Which API request last wrote an object that workers will act on.

    Work is derived from the change log by scanners (the lifecycle feed, the
    sync's change scan) that run later, in a worker, for many requests at once;
    this row lets them carry the writing request's id into the work they ask
    for (``kapi.observability.origin``). Rows older than a few minutes are
    dropped by the lifecycle sweep.
    """

    uid = models.UUIDField(primary_key=True)
    request_id = models.CharField(max_length=128)
    written = models.DateTimeField(db_default=models.functions.Now())

    class Meta:
        db_table = "kapi_write_origin"
        app_label = "kapi"
