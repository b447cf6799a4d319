"""The controller runtime's tables: the work items and the wake flags.

``WorkItem`` is the intent: one row per (controller, key) still to reconcile.
Celery messages only wake workers up; a lost message or a killed worker loses
nothing, because the row stays until a run finishes it. ``WakeFlag`` is the
``wanted`` flag of a change feed (``kapi.wakeflag``), apart from the feed's
cursor (``kapi.models.ChangeFeedCursor``, owned by storage), so writers that
flip it never wait on a feed's transaction.
"""

from django.contrib.postgres.fields import ArrayField
from django.db import models

__all__ = ["WakeFlag", "WorkItem"]


class WorkItem(models.Model):
    """One key of one controller to reconcile, unique per (controller, key).

    A worker claims due rows with a conditional UPDATE (``claimed_until`` in
    the future: the lease); a lease left by a killed worker simply expires.
    ``generation`` is bumped when the key is requested again, so a run in
    progress knows to keep the row instead of deleting it. ``group``,
    ``resource``, ``namespace``, ``name`` name the object the key is about
    (when there is one), ``argument`` is a short option of the run (the
    propagation policy of a namespace's delete). ``hints`` are what the
    requests since the last run said (a set: "drift", "push"...), handed to
    the run that claims them and kept for the next one if it fails.
    ``holder`` is the claim's token: only its holder finishes or extends it,
    so a worker whose lease ran out cannot undo the next holder's claim.
    """

    controller = models.CharField(max_length=32)
    key = models.CharField(max_length=512, db_collation="C")
    group = models.CharField(max_length=253, db_collation="C", blank=True)
    resource = models.CharField(max_length=253, db_collation="C", blank=True)
    namespace = models.CharField(max_length=253, db_collation="C", blank=True)
    name = models.CharField(max_length=253, db_collation="C", blank=True)
    argument = models.CharField(max_length=32, blank=True)
    generation = models.IntegerField(default=0)
    attempts = models.IntegerField(default=0)
    due = models.DateTimeField(db_default=models.functions.Now())
    claimed_until = models.DateTimeField(null=True)
    holder = models.UUIDField(null=True)
    # Also defaults to '{}' in the database (migration 0011), for raw INSERTs.
    hints = ArrayField(models.CharField(max_length=32), default=list)
    # The API request that caused this work (its X-Request-Id), for log lines.
    request_id = models.CharField(max_length=128, blank=True, db_default="")

    class Meta:
        db_table = "kapi_work_item"
        app_label = "kapi"
        constraints = [
            models.UniqueConstraint(fields=["controller", "key"], name="kapi_work_item_key")
        ]
        indexes = [models.Index(fields=["due", "id"], name="kapi_work_item_due")]


class WakeFlag(models.Model):
    """``wanted``: whether a writer asked feed ``name`` to run since it last looked."""

    name = models.CharField(primary_key=True, max_length=64)
    wanted = models.BooleanField(default=False, db_default=False)

    class Meta:
        db_table = "kapi_wake_flag"
        app_label = "kapi"
