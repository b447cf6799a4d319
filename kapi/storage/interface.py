"""The storage interface: keys, versions and the few primitives the registry needs.

Modelled on kube-apiserver's ``pkg/storage/interfaces.go``: objects are plain
dicts, addressed by ``Key``; every write returns the object with the
``metadata.resourceVersion`` it was stored at; compare-and-swap on that version
is the only concurrency control.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

if TYPE_CHECKING:
    from kapi.selectors import FieldSelector, LabelSelector

__all__ = [
    "NO_LABELS",
    "Change",
    "ChangeFilter",
    "EncodedItem",
    "EncodedList",
    "EncodedPage",
    "FeedBatch",
    "GroupResource",
    "Key",
    "ListPage",
    "ListQuery",
    "ObjectSummary",
    "Preconditions",
    "Storage",
    "UpdateFunc",
    "check_preconditions",
    "encode_json",
]

Object = dict[str, Any]

#: A stored collection: (group, resource), as a ``Key`` names them.
GroupResource = tuple[str, str]


@dataclass(frozen=True)
class Key:
    """Where one object lives: ``namespace`` is ``""`` for cluster-scoped resources."""

    group: str
    resource: str
    namespace: str
    name: str


@dataclass(frozen=True)
class ObjectSummary:
    """An object without its body, for controllers that decide what to do
    about many objects at once: where it is, its uid, whether it is being
    deleted (``metadata.deletionTimestamp`` is set), its finalizers and its
    ownerReferences (the entries that are objects)."""

    key: Key
    uid: str
    deleting: bool
    finalizers: tuple[str, ...] = ()
    owner_references: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Change:
    """One entry of the change log as a feed consumer reads it: what happened
    (``ADDED``, ``MODIFIED``, ``DELETED``) to which object, at which version,
    with the object's ``metadata`` and ``status`` then, and the API request
    that wrote it when known (``kapi.observability.origin``)."""

    revision: int
    type: str
    key: Key
    uid: str
    metadata: dict[str, Any]
    status: dict[str, Any]
    request_id: str = ""


@dataclass(frozen=True)
class ChangeFilter:
    """Which changes a feed reads: those of an object in one of ``groups``, of
    one of the (group, resource) pairs ``resources``, or carrying one of the
    label keys ``labels``. ``None`` instead of a filter: every change."""

    groups: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    resources: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class FeedBatch:
    """What ``Storage.read_feed`` returns. ``changes`` are the consumer's next
    changes in version order; once it has handled them it moves its cursor to
    ``end`` (``Storage.advance_feed``). ``expired``: the cursor is missing or
    older than the compacted history, so ``changes`` is empty and the consumer
    must rebuild its intent from the objects themselves before moving to
    ``end``. ``new``: expired because the consumer never had a cursor (its
    first run on a fresh database), not because history was lost."""

    changes: list[Change]
    end: int
    expired: bool = False
    new: bool = False


@dataclass(frozen=True)
class Preconditions:
    """Must hold for a write to go ahead (DeleteOptions.preconditions, PUT's version)."""

    uid: str | None = None
    resource_version: int | None = None


@dataclass
class ListQuery:
    """What a list asks storage for: a collection, optionally one namespace,
    narrowed by the parsed selectors and by ``names`` (a batch read of known
    objects), read at ``at_revision`` (now when None), a page of ``limit`` after
    the key ``after``. Storage alone decides how a selection becomes a query.
    """

    group: str
    resource: str
    namespace: str | None = None
    names: tuple[str, ...] | None = None
    labels: LabelSelector | None = None
    fields: FieldSelector | None = None
    limit: int | None = None
    after: tuple[str, str] | None = None
    at_revision: int | None = None
    count_remaining: bool = False
    #: With ``count_remaining`` and ``after`` at ``at_revision``: how many
    #: objects the page ending at ``after`` said remained; the count is then
    #: that less this page's items, not read again.
    remaining_before: int | None = None


@dataclass
class ListPage:
    items: list[Object]
    revision: int
    last_key: tuple[str, str] | None = None
    remaining: int | None = None


def encode_json(obj: Any) -> bytes:
    """``obj`` as JSON, in bytes of their own size: orjson's result keeps its
    16 KiB write buffer, which a caller that keeps the bytes must not."""
    return bytes(memoryview(orjson.dumps(obj)))


#: The labels of an object that has none (shared: read-only).
NO_LABELS: Mapping[str, str] = MappingProxyType({})


class EncodedItem(NamedTuple):
    """One listed object as its stored JSON (stamped with its resourceVersion,
    keys in kube's order) and what list selections read without parsing it:
    namespace, name and labels (read-only)."""

    namespace: str
    name: str
    json: bytes
    labels: Mapping[str, str]

    @classmethod
    def of(cls, obj: Object) -> EncodedItem:
        """``obj`` (stamped with its resourceVersion, keys in kube's order) encoded."""
        meta = obj["metadata"]
        return cls(meta.get("namespace") or "", meta["name"], encode_json(obj), meta.get("labels") or NO_LABELS)


@dataclass
class EncodedList:
    items: list[EncodedItem]
    revision: int


@dataclass
class EncodedPage:
    """A :class:`ListPage` whose items are each object's JSON (stamped with
    its resourceVersion, keys in kube's order), in (namespace, name) order."""

    items: list[bytes]
    revision: int
    last_key: tuple[str, str] | None = None
    remaining: int | None = None


UpdateFunc = Callable[[Object], Object]


class Storage(ABC):
    """A versioned object store. Implementations must be safe to share between threads."""

    @abstractmethod
    def create(self, key: Key, obj: Object, namespace: Key | None = None) -> Object:
        """Insert ``obj`` at ``key``; raises ``KeyExists``. Does not mutate ``obj``.

        With ``namespace`` (the key of a Namespace object), inserts only if that
        namespace exists and is not Terminating (kube's NamespaceLifecycle
        admission), in the same atomic step as the insert: raises
        ``KeyNotFound(namespace)`` or ``NamespaceTerminating(namespace)``.
        """

    @abstractmethod
    def get(self, key: Key) -> Object:
        """The current object at ``key``; raises ``KeyNotFound``."""

    @abstractmethod
    def update(self, key: Key, obj: Object, expected_revision: int) -> Object:
        """Replace the object if it is still at ``expected_revision``.

        Raises ``KeyNotFound`` or ``ResourceVersionConflict``.
        """

    @abstractmethod
    def delete(self, key: Key, expected_revision: int) -> Object:
        """Remove the object if it is still at ``expected_revision``; returns its
        last state stamped with the delete's resourceVersion."""

    @abstractmethod
    def list(self, query: ListQuery) -> ListPage:
        """A consistent page of objects, ordered by (namespace, name)."""

    def list_encoded(self, query: ListQuery) -> EncodedList:
        """``list(query)`` with every object encoded as JSON, in no particular
        order: for a caller that keeps many objects to serve them later (an
        API process's list cache). Implementations may stream the rows and
        never hold them all parsed."""
        page = self.list(query)
        return EncodedList([EncodedItem.of(o) for o in page.items], page.revision)

    def list_page_encoded(self, query: ListQuery) -> EncodedPage:
        """``list(query)`` with every object encoded as JSON, in order: for a
        caller that serves the stored form as it is. Implementations may
        stream the rows and never hold them all parsed."""
        page = self.list(query)
        return EncodedPage([encode_json(o) for o in page.items], page.revision, page.last_key, page.remaining)

    @abstractmethod
    def current_revision(self) -> int:
        """A resourceVersion at or after every write acknowledged so far, such
        that no write at or below it is still in flight."""

    @abstractmethod
    def compacted_revision(self) -> int:
        """The oldest resourceVersion still answerable: watches and lists from
        below it get 410 Expired (etcd's compaction revision)."""

    @abstractmethod
    def keys(self, group: str, resources: list[str]) -> list[Key]:
        """The keys of every stored object of ``resources`` in ``group`` (no
        object bodies: for callers that only ask what exists)."""

    @abstractmethod
    def count_up_to(self, group: str, resource: str, limit: int) -> int:
        """How many objects of ``resource`` are stored, counting no further
        than ``limit`` (cheap however many there are)."""

    @abstractmethod
    def count_by_resource(self) -> dict[tuple[str, str], int]:
        """How many objects are stored, per (group, resource)."""

    @abstractmethod
    def change_log_size(self) -> int:
        """How many changes the history (the change log) holds now."""

    @abstractmethod
    def change_stamp(self, group: str) -> tuple[int, int, int]:
        """A stamp of ``group``'s history that moves with every committed write
        of any of its objects, including one committed late with a smaller
        version: (newest version, changes, sum of versions). Compaction moves
        it too (a needless refresh for the caller, never a missed one)."""

    @abstractmethod
    def read_feed(
        self,
        consumer: str,
        limit: int,
        select: ChangeFilter | None = None,
        metadata_keys: tuple[str, ...] | None = None,
    ) -> FeedBatch:
        """At most ``limit`` changes (that ``select`` matches) after
        ``consumer``'s durable cursor, up to ``current_revision()`` (so a
        version committed late is never skipped). ``end`` is the last change's
        version when the batch is full, else that revision. With
        ``metadata_keys`` each change carries only those keys of its
        metadata (the ones it has) and no status; None: all of both."""

    @abstractmethod
    def advance_feed(self, consumer: str, revision: int) -> None:
        """Move ``consumer``'s cursor forward to ``revision`` (never back). In
        the caller's transaction, so the cursor moves with what the consumer
        did about the changes, or neither does."""

    # What controllers (the garbage collector, the namespace controller, the
    # ClusterRole aggregator, the sync) ask of what is stored. Objects are
    # named by uid as often as by key: ownerReferences name owners by uid.

    @abstractmethod
    def get_by_uid(self, uid: str) -> tuple[Key, Object] | None:
        """The object whose ``metadata.uid`` is ``uid`` (a valid UUID), and its
        key; None when there is none."""

    @abstractmethod
    def summaries_by_uid(self, uids: Sequence[str]) -> list[ObjectSummary]:
        """The objects whose uids are among ``uids`` (valid UUIDs), in no order."""

    @abstractmethod
    def summaries_by_name(
        self, collection: GroupResource, namespace: str, names: Sequence[str]
    ) -> list[ObjectSummary]:
        """The objects of ``collection`` in ``namespace`` named one of ``names``."""

    @abstractmethod
    def summaries_with(self, collection: GroupResource, field: str) -> list[ObjectSummary]:
        """The objects of ``collection`` that have the top-level field ``field``
        (such as ClusterRoles with an ``aggregationRule``)."""

    @abstractmethod
    def has_field(self, key: Key, path: Sequence[str]) -> bool:
        """Whether the object at ``key`` exists and has a value (JSON null
        included) at ``path`` (such as ``("status", "healthCheckDeadline")``)."""

    @abstractmethod
    def dependents(self, owner_uids: Sequence[str], limit: int | None = None) -> list[ObjectSummary]:
        """The objects naming one of ``owner_uids`` in their ownerReferences,
        in uid order; the first ``limit`` of them when given."""

    @abstractmethod
    def with_owners(self) -> list[ObjectSummary]:
        """Every object that has ownerReferences (a full resync of the
        garbage collector)."""

    @abstractmethod
    def being_deleted(
        self, finalizers: Sequence[str], collections: Sequence[GroupResource] = ()
    ) -> list[ObjectSummary]:
        """The objects being deleted that carry one of ``finalizers`` or belong
        to one of ``collections`` (whatever their finalizers)."""

    @abstractmethod
    def namespaces_without(self, namespaces: GroupResource, member: Key) -> list[ObjectSummary]:
        """The namespaces (objects of ``namespaces``, cluster-scoped) not being
        deleted that hold no object of ``member``'s collection named
        ``member.name`` (``member.namespace`` is ignored): those lacking their
        default ServiceAccount, say."""

    @abstractmethod
    def count_in_namespace(
        self, namespace: str, collections: Sequence[GroupResource]
    ) -> dict[GroupResource, int]:
        """How many objects of each of ``collections`` ``namespace`` holds
        (collections holding none are left out)."""

    @abstractmethod
    def finalizers_in_namespace(
        self, namespace: str, collections: Sequence[GroupResource]
    ) -> dict[str, int]:
        """For each finalizer, how many objects of ``collections`` in
        ``namespace`` carry it."""

    @abstractmethod
    def count_deleting_in_namespace(self, namespace: str) -> int:
        """How many objects in ``namespace`` (of any collection) are being deleted."""

    @contextmanager
    def exclusive(self, name: str) -> Iterator[None]:
        """Run the block's reads and writes as one transaction that no other
        ``exclusive(name)`` block overlaps, in any process: for decisions that
        read other objects before writing (which CRD gets a name)."""
        yield

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """Run the block's writes as one transaction: they commit together, or
        not at all (nested, they are undone with the innermost block that fails)."""
        yield

    def latest_change_revision(self, group: str, resource: str) -> int:
        """A number that changes whenever an object of (group, resource) is created,
        changed or deleted (the newest change's resourceVersion). Cheap: callers
        poll it to keep caches such as the CRD-built catalog fresh."""
        page = self.list(ListQuery(group=group, resource=resource))
        return hash(tuple(int(o["metadata"]["resourceVersion"]) for o in page.items))

    def recent(self, key: Key) -> Object | None:
        """A recent state of the object at ``key`` that costs no read of the
        database (a private copy), or None. It may be stale: ``guaranteed_update``
        tries it first and reads only when it turns out not to be current, as
        kube's GuaranteedUpdate starts from the cacher's copy. None here."""
        return None

    def guaranteed_update(
        self,
        key: Key,
        try_update: UpdateFunc,
        preconditions: Preconditions | None = None,
        attempts: int = 16,
        atomic_attempts: bool = False,
    ) -> Object:
        """Read, transform with ``try_update``, compare-and-swap; retry on races.

        ``try_update`` receives the current object (a fresh copy it may mutate) and
        returns the object to store; it raises to abort. When ``preconditions``
        carries a resourceVersion, a race is the caller's conflict and is not
        retried (kube's GuaranteedUpdate). With ``atomic_attempts``, each attempt
        (what ``try_update`` writes itself, such as a quota's charge, and the
        swap) is one transaction: a failed swap or a refusal undoes it.

        The first attempt starts from :meth:`recent` when it knows the object.
        The compare-and-swap keeps a stale start from being written; any other
        outcome of a stale start (an error, a precondition, or nothing to write
        said by raising) is decided again on the state read from the database,
        unless that turns out to be the same version, as kube does with a
        cached object (``origStateIsCurrent``).
        """
        from kapi.storage.errors import ResourceVersionConflict

        current = self.recent(key)
        fresh = current is None
        for _ in range(attempts):
            if current is None:
                current = self.get(key)
            revision = int(current["metadata"]["resourceVersion"])
            swapping = False
            try:
                with self.atomic() if atomic_attempts else nullcontext():
                    check_preconditions(key, current, preconditions)
                    updated = try_update(current)
                    swapping = True
                    return self.update(key, updated, revision)
            except Exception as exc:
                if swapping:
                    if not isinstance(exc, ResourceVersionConflict):
                        raise
                    if fresh and preconditions and preconditions.resource_version is not None:
                        raise
                    current, fresh = None, True
                    continue
                if fresh:
                    raise
                current = self.get(key)
                if int(current["metadata"]["resourceVersion"]) == revision:
                    raise  # the recent state was the current one
                fresh = True
        raise ResourceVersionConflict(key, "too many concurrent updates")

    def guaranteed_delete(
        self, key: Key, preconditions: Preconditions | None = None, attempts: int = 16
    ) -> Object:
        from kapi.storage.errors import ResourceVersionConflict

        for _ in range(attempts):
            current = self.get(key)
            check_preconditions(key, current, preconditions)
            try:
                return self.delete(key, int(current["metadata"]["resourceVersion"]))
            except ResourceVersionConflict:
                if preconditions and preconditions.resource_version is not None:
                    raise
        raise ResourceVersionConflict(key, "too many concurrent deletes")


def check_preconditions(key: Key, current: Object, pre: Preconditions | None) -> None:
    """Raise ``ResourceVersionConflict`` (with kube's message) unless ``pre`` holds."""
    from kapi.storage.errors import ResourceVersionConflict

    if pre is None:
        return
    meta = current["metadata"]
    if pre.uid is not None and pre.uid != meta.get("uid"):
        raise ResourceVersionConflict(
            key,
            f"Precondition failed: UID in precondition: {pre.uid}, UID in object meta: {meta.get('uid')}",
        )
    if pre.resource_version is not None and str(pre.resource_version) != meta.get(
        "resourceVersion"
    ):
        raise ResourceVersionConflict(
            key,
            "Precondition failed: ResourceVersion in precondition: "
            f"{pre.resource_version}, ResourceVersion in object meta: {meta.get('resourceVersion')}",
        )
