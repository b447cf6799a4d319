"""The two tables every Kubernetes object lives in.

``StoredObject`` holds the current state of each object; ``Change`` is the
append-only log of every write (the source of truth for watches, past lists and
the admin UI's history). Both take their ``resource_version`` from the one
PostgreSQL sequence ``kapi_resource_version`` through ``kapi_next_rv()``; see
``kapi/storage/postgres.py`` for the write statements.
"""

from django.contrib.postgres.indexes import GinIndex
from django.db import models

__all__ = ["Change", "StoredObject"]


class StoredObject(models.Model):
    """The current state of one object.

    ``data`` is the full object except ``metadata.resourceVersion``, which lives in
    its own column and is put back on read. ``namespace`` is ``""`` for
    cluster-scoped resources. Names sort in byte order (collation C), the order
    kube-apiserver lists in.
    """

    group = models.CharField(max_length=253, db_collation="C")
    resource = models.CharField(max_length=253, db_collation="C")
    namespace = models.CharField(max_length=253, db_collation="C", blank=True)
    name = models.CharField(max_length=253, db_collation="C")
    uid = models.UUIDField(unique=True)
    resource_version = models.BigIntegerField()
    data = models.JSONField()
    labels = models.JSONField(default=dict)

    class Meta:
        db_table = "kapi_object"
        constraints = [
            models.UniqueConstraint(
                fields=["group", "resource", "namespace", "name"], name="kapi_object_key"
            )
        ]
        indexes = [
            GinIndex(fields=["labels"], name="kapi_object_labels"),
            models.Index(fields=["resource_version"], name="kapi_object_rv"),
        ]
        verbose_name = "object"

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.resource}.{self.group or 'core'} {where}{self.name}"


class Change(models.Model):
    """One write, as the object stood after it (for deletes: its last state)."""

    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"
    TYPES = [(t, t) for t in (ADDED, MODIFIED, DELETED)]

    resource_version = models.BigIntegerField(primary_key=True)
    group = models.CharField(max_length=253, db_collation="C")
    resource = models.CharField(max_length=253, db_collation="C")
    namespace = models.CharField(max_length=253, db_collation="C", blank=True)
    name = models.CharField(max_length=253, db_collation="C")
    uid = models.UUIDField()
    type = models.CharField(max_length=8, choices=TYPES)
    data = models.JSONField()
    created = models.DateTimeField(db_default=models.functions.Now())

    class Meta:
        db_table = "kapi_change"
        indexes = [
            models.Index(
                fields=["group", "resource", "namespace", "name", "resource_version"],
                name="kapi_change_key_rv",
            ),
            models.Index(fields=["uid", "resource_version"], name="kapi_change_uid_rv"),
        ]
        verbose_name = "change"

    def __str__(self) -> str:
        return f"{self.resource_version} {self.type} {self.resource} {self.namespace}/{self.name}"



class ChangeFeedCursor(models.Model):
    """How far one consumer of the change log has read (``Storage.read_feed``):
    ``revision``, the last resourceVersion it has handled."""

    consumer = models.CharField(primary_key=True, max_length=64)
    revision = models.BigIntegerField(default=0)

    class Meta:
        db_table = "kapi_feed_cursor"


# The controller runtime's tables (work items, wake flags) and the write origins.
from kapi.controllers.models import WakeFlag, WorkItem  # noqa: E402,F401
from kapi.lifecycle.models import WriteOrigin  # noqa: E402,F401


class DueTimer(models.Model):
    """When a work table's timer fires (``kapi.duetimer``); ``armed_for`` NULL:
    not armed."""

    name = models.CharField(primary_key=True, max_length=64)
    #: The Celery task the scheduler sends when ``armed_for`` comes.
    task = models.CharField(max_length=200)
    armed_for = models.DateTimeField(null=True)

    class Meta:
        db_table = "kapi_due_timer"
