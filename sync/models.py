"""The sync's own rows: what is left to do per object, and the change-log cursor.

``WorkItem`` holds the intent (the queue only speeds it up): one row per Sync or
GitRepository. ``requested`` counts requests and ``handled`` is the request
count the last finished run started from, so ``requested > handled`` means a
run is owed; ``due_at`` is the next periodic run (interval, retry backoff).
``enqueued_at`` is the sweeper's claim (a conditional UPDATE), so a due item
is put on the queue once, and again only when that claim went stale.

Runs of one item never overlap: the worker holds a PostgreSQL advisory lock
on the item's id for the whole run (released by PostgreSQL when a killed
worker's connection drops).
"""

from __future__ import annotations

from django.db import models

__all__ = ["ChangeCursor", "WorkItem"]


class WorkItem(models.Model):
    KIND_REPOSITORY = "GitRepository"
    KIND_SYNC = "Sync"

    kind = models.CharField(max_length=16)
    namespace = models.CharField(max_length=253, db_collation="C")
    name = models.CharField(max_length=253, db_collation="C")
    requested = models.BigIntegerField(default=1)
    handled = models.BigIntegerField(default=0)
    # Why the newest request was made ("drift", "push", "requestedAt", ...).
    reason = models.CharField(max_length=32, default="")
    # A drift was reported since the last run: the next run applies in full.
    drift = models.BooleanField(default=False)
    due_at = models.DateTimeField(null=True)
    enqueued_at = models.DateTimeField(null=True)
    failures = models.IntegerField(default=0)
    # The API request behind the newest request (its X-Request-Id), for log lines.
    request_id = models.CharField(max_length=128, blank=True, db_default="")

    class Meta:
        db_table = "sync_work_item"
        constraints = [
            models.UniqueConstraint(fields=["kind", "namespace", "name"], name="sync_work_item_key")
        ]
        indexes = [models.Index(fields=["due_at"], name="sync_work_item_due")]


class ChangeCursor(models.Model):
    """Row 1: ``revision``, the newest ``kapi_change.resource_version`` the
    change scan has read. Row 2: ``wanted``, whether a write that may matter to
    the sync asked for a scan since the scan last looked (``sync.scanwake``)."""

    id = models.IntegerField(primary_key=True)
    revision = models.BigIntegerField(default=0)
    wanted = models.BooleanField(default=False, db_default=False)

    class Meta:
        db_table = "sync_change_cursor"
