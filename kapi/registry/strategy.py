"""Per-resource behaviour: defaulting, validation, conversion and table columns.

A ``Strategy`` is what kube-apiserver calls a REST strategy
(``pkg/registry/rest/create.go``, ``update.go``). The generic registry calls its
hooks in a fixed order on every write; each hook says whether it may mutate the
object it is given.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kapi.errors import Cause

__all__ = ["Column", "Strategy", "human_duration", "object_age"]

Object = dict[str, Any]


class Column(dict):
    """A ``TableColumnDefinition``."""

    def __init__(
        self, name: str, type: str = "string", description: str = "", priority: int = 0,
        format: str = "",
    ) -> None:
        super().__init__(
            name=name, type=type, format=format, description=description, priority=priority
        )


NAME_COLUMN = Column(
    "Name",
    format="name",
    description="Name must be unique within a namespace. Is required when creating "
    "resources, although some resources may allow a client to request the generation "
    "of an appropriate name automatically. Name is primarily intended for creation "
    "idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
)
AGE_COLUMN = Column(
    "Age",
    description="CreationTimestamp is a timestamp representing the server time when this "
    "object was created. It is not guaranteed to be set in happens-before order across "
    "separate operations. Clients may not set this value. It is represented in RFC3339 "
    "form and is in UTC.",
)


def human_duration(seconds: float) -> str:
    """kube's ``duration.HumanDuration``: ``42s``, ``5m10s``, ``3h``, ``12d``, ``2y``."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 60 * 2:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        rest = s % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        rest = (s % 3600) // 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d{rest}h" if rest else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = hours // 24
        rest = days % 365
        return f"{days // 365}y{rest}d" if rest else f"{days // 365}y"
    return f"{hours // 24 // 365}y"


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def object_age(obj: Object, now: datetime | None = None) -> str:
    created = parse_time((obj.get("metadata") or {}).get("creationTimestamp"))
    if created is None:
        return "<unknown>"
    now = now or datetime.now(UTC)
    return human_duration((now - created).total_seconds())


class Strategy:
    """Default behaviour of a stored resource; subclasses override the hooks."""

    #: Writes to the main resource keep the stored ``status`` (the type has a
    #: ``/status`` subresource that alone may change it).
    status_subresource: bool = False
    #: PUT of a missing object creates it (kube: false for most types).
    allow_create_on_update: bool = False
    #: PUT without ``metadata.resourceVersion`` overwrites (kube: true for core types).
    allow_unconditional_update: bool = True
    #: A delete with no propagation policy (and no garbage-collector
    #: finalizer on the object) orphans the dependents (kube's
    #: ``DefaultGarbageCollectionPolicy`` ``OrphanDependents``: core/v1
    #: ReplicationControllers, for backward compatibility).
    orphan_by_default: bool = False
    #: The metadata fields a ``/status`` write may change (kube's status
    #: strategies keep the rest; a Deployment's lets annotations through).
    status_metadata: tuple[str, ...] = ()
    #: Writes of this type run one at a time across every process: preparing one
    #: reads other objects of the type (CRD names are first come, first served).
    serialize_writes: bool = False
    #: A delete answers with the object deleted rather than a ``Status``
    #: (kube's ``ReturnDeletedObject``: Services).
    return_deleted_object: bool = False

    # -- writes ---------------------------------------------------------------
    def prepare_for_create(self, obj: Object) -> None:
        """Default and normalise a new object. MAY mutate ``obj``."""

    def prepare_for_update(self, obj: Object, old: Object) -> None:
        """Carry over what the client may not change. MAY mutate ``obj`` (not ``old``)."""
        if self.status_subresource and "status" in old:
            obj["status"] = old["status"]
        elif self.status_subresource:
            obj.pop("status", None)

    def prepare_for_status_update(self, obj: Object, old: Object) -> None:
        """A ``/status`` write changes only status. MAY mutate ``obj``."""
        for key in list(obj):
            if key not in ("apiVersion", "kind", "metadata", "status"):
                del obj[key]
        for key, value in old.items():
            if key not in ("metadata", "status"):
                obj[key] = value

    def validate(self, obj: Object) -> list[Cause]:
        """Type-specific validation of a new object. Must NOT mutate ``obj``."""
        return []

    def validate_update(self, obj: Object, old: Object) -> list[Cause]:
        """Type-specific validation of a change. Must NOT mutate either object."""
        return self.validate(obj)

    def warnings(self, obj: Object) -> list[str]:
        """Warnings to return in ``Warning`` headers. Must NOT mutate ``obj``."""
        return []

    def check_delete(self, obj: Object) -> None:
        """Refuse a delete by raising a ``StatusError``. Must NOT mutate ``obj``."""

    def pending_finalizers(self, obj: Object) -> bool:
        """Whether something must still finish before a deleting object may go
        (kube: non-empty ``metadata.finalizers``). Must NOT mutate ``obj``."""
        return bool((obj.get("metadata") or {}).get("finalizers"))

    def prepare_for_graceful_delete(self, obj: Object) -> None:
        """The first DELETE of an object that cannot go at once (it has just got its
        ``deletionTimestamp``). MAY mutate ``obj``."""

    def prepare_for_subresource_update(self, subresource: str, obj: Object, old: Object) -> None:
        """A write to a subresource other than ``status``. MAY mutate ``obj``."""
        self.prepare_for_update(obj, old)

    # -- versions ---------------------------------------------------------------
    def to_storage(self, obj: Object, version: str) -> Object:
        """Convert from the served ``version`` to the stored form. MAY mutate ``obj``."""
        return obj

    def from_storage(self, obj: Object, version: str) -> Object:
        """Convert from the stored form to the served ``version``. MAY mutate ``obj``."""
        return obj

    def conversion_key(self, version: str) -> str:
        """Tells apart the ways ``from_storage`` may convert to ``version`` over
        time (a cache of converted objects keeps one per key); "" when it
        converts the same way for the life of the process."""
        return ""

    def serves_stored_form(self, version: str) -> bool:
        """Whether ``from_storage`` returns every stored object unchanged for
        ``version`` (then a cache may serve the stored JSON as it is). A
        strategy that overrides ``from_storage`` says False here too."""
        return True

    # -- reads ------------------------------------------------------------------
    def storage_field(self, path: str) -> str:
        """The dotted path of a selectable field in the stored form of the object."""
        return path

    def field_value(self, obj: Object, path: str) -> str:
        """The string value of a selectable field (missing reads as "")."""
        node: Any = obj
        for part in path.split("."):
            if not isinstance(node, dict):
                return ""
            node = node.get(part)
        if node is None:
            return ""
        if isinstance(node, bool):
            return "true" if node else "false"
        return str(node)

    def table_columns(self) -> list[Column]:
        """Columns after Name and before Age."""
        return []

    def table_cells(self, obj: Object) -> list[Any]:
        """Cells for ``table_columns()``. Must NOT mutate ``obj``."""
        return []

    def table_definition(self) -> list[Column]:
        return [NAME_COLUMN, *self.table_columns(), AGE_COLUMN]

    def table_row_cells(self, obj: Object) -> list[Any]:
        meta = obj.get("metadata") or {}
        return [meta.get("name", ""), *self.table_cells(obj), object_age(obj)]
