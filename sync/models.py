"""The sync's own row: the change scan's cursor (``ChangeCursor``).

What is left to do per Sync or GitRepository is a work item of the controller
runtime (``kapi_work_item``, ``sync.controllers``).
"""

from __future__ import annotations

from django.db import models

__all__ = ["ChangeCursor"]


class ChangeCursor(models.Model):
    """Row 1: ``revision``, the newest ``kapi_change.resource_version`` the
    change scan has read. Row 2: ``wanted``, whether a write that may matter to
    the sync asked for a scan since the scan last looked (``sync.scanwake``)."""

    id = models.IntegerField(primary_key=True)
    revision = models.BigIntegerField(default=0)
    wanted = models.BooleanField(default=False, db_default=False)

    class Meta:
        db_table = "sync_change_cursor"
