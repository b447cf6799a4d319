"""What the deletion-lifecycle workers have left to do, kept in PostgreSQL.

``FeedCursor`` is how far the garbage collector has read the change log
(``kapi_change``); ``Work`` holds one row per thing to look at again: an object
whose owners must be checked, an owner whose dependents must be handled, a
namespace to terminate, an object to delete. The queue only wakes workers up;
these rows are the intent, so a lost task or a killed worker loses nothing.
"""

from django.db import models

__all__ = ["FeedCursor", "Work"]


class FeedCursor(models.Model):
    """Row 1: ``revision``, the last resourceVersion the feed has handled. Row 2:
    ``wanted``, whether a writer asked for the feed to run since it last looked
    (its own row: writers flip it while the feed's transaction holds row 1)."""

    id = models.IntegerField(primary_key=True)
    revision = models.BigIntegerField(default=0)
    wanted = models.BooleanField(default=False)

    class Meta:
        db_table = "kapi_lifecycle_cursor"
        app_label = "kapi"


class Work(models.Model):
    """One item of lifecycle work, unique per (kind, uid).

    A worker claims due rows with a conditional UPDATE (``claimed_until`` in the
    future); a claim left by a dead worker simply expires. ``generation`` is
    bumped when a new change asks for the item again while it is claimed, so the
    claimant knows to keep the row instead of deleting it.
    """

    ATTEMPT = "attempt"  # check this object's owners (kube's attemptToDeleteItem)
    OWNER = "owner"  # handle this owner's dependents and GC finalizers
    NAMESPACE = "namespace"  # default ServiceAccount, or terminate the namespace
    DELETE = "delete"  # delete this object (namespace content)
    AGGREGATE = "aggregate"  # write an aggregating ClusterRole's rules

    kind = models.CharField(max_length=16)
    uid = models.UUIDField()
    group = models.CharField(max_length=253, db_collation="C", blank=True)
    resource = models.CharField(max_length=253, db_collation="C", blank=True)
    namespace = models.CharField(max_length=253, db_collation="C", blank=True)
    name = models.CharField(max_length=253, db_collation="C", blank=True)
    policy = models.CharField(max_length=16, blank=True)
    generation = models.IntegerField(default=0)
    attempts = models.IntegerField(default=0)
    due = models.DateTimeField(db_default=models.functions.Now())
    claimed_until = models.DateTimeField(null=True)

    class Meta:
        db_table = "kapi_lifecycle_work"
        app_label = "kapi"
        constraints = [
            models.UniqueConstraint(
                fields=["kind", "uid"], name="kapi_lifecycle_work_item"
            )
        ]
        indexes = [models.Index(fields=["due", "id"], name="kapi_lifecycle_work_due")]
