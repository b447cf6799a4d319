"""The generic registry: one code path that serves every resource type.

Modelled on kube-apiserver's ``pkg/registry/generic/registry/store.go``. Each
verb runs the same recipe (system fields, strategy hooks, validation, storage)
and turns storage errors into ``StatusError``s. Everything that writes objects
(REST handlers, workers, the sync, the admin UI) comes through here.
"""

from __future__ import annotations

import copy
import dataclasses
import secrets
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any, Protocol

from kapi import errors, ids
from kapi.clock import now_rfc3339
from kapi.errors import Cause, StatusError
from kapi.objcopy import deep_copy
from kapi.registry.catalog import catalog
from kapi.registry.fields import check_fields, manage_fields
from kapi.registry.options import (
    CreateOptions,
    DeleteOptions,
    ListOptions,
    UpdateOptions,
)
from kapi.registry.patch import PatchMixin
from kapi.registry.resource import ResourceType
from kapi.storage import (
    Key,
    KeyExists,
    KeyNotFound,
    ListQuery,
    NamespaceTerminating,
    Preconditions,
    ResourceVersionConflict,
    ResourceVersionExpired,
    Storage,
    default_storage,
)
from kapi.storage.interface import EncodedPage, check_preconditions
from kapi.validation.metadata import validate_object_meta, validate_object_meta_update

__all__ = ["BEFORE_WRITE_OBSERVERS", "GC_FINALIZERS", "WRITE_OBSERVERS", "Registry", "now_rfc3339"]

Object = dict[str, Any]

# kube's utilrand alphabet: no vowels (no words), no confusable characters.
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_GENERATE_NAME_ATTEMPTS = 8
_MODIFIED = "the object has been modified; please apply your changes to the latest version and try again"

#: The finalizers the garbage collector acts on (metav1.FinalizerOrphanDependents,
#: metav1.FinalizerDeleteDependents).
ORPHAN = "orphan"
FOREGROUND = "foregroundDeletion"
GC_FINALIZERS = (ORPHAN, FOREGROUND)

#: Called as ``fn(rt, obj, deleted)`` after every stored write; the lifecycle
#: workers register one (``kapi.lifecycle.wakeup``) to be woken up. Must not raise.
WRITE_OBSERVERS: list = []
#: Called as ``observer(rt, obj, deleted)`` just before a write is sent to
#: storage, with the object as it will be stored (or, for a delete, as it
#: stands): for what must be visible no later than the write itself (the
#: request a write came from, kapi.observability.origin).
BEFORE_WRITE_OBSERVERS: list = []


class AdmissionPlugin(Protocol):
    """Validating admission that every create and every update that changes
    something goes through, after validation and the writer's own admission,
    whoever writes (kube's ResourceQuota admission, ``kapi.quota.admission``)."""

    def __call__(self, rt: ResourceType, namespace: str, new: Object, old: Object | None, dry_run: bool) -> None:
        """May refuse with a ``StatusError`` (``old`` is None on create)."""

    def writes(self, rt: ResourceType, namespace: str, updating: bool) -> bool:
        """Whether admitting such a write may itself write (a quota's charge):
        then the two commit together, or neither does."""


ADMISSION_PLUGINS: list[AdmissionPlugin] = []


def _admit(rt: ResourceType, namespace: str, new: Object, old: Object | None, dry_run: bool) -> None:
    for plugin in ADMISSION_PLUGINS:
        plugin(rt, namespace, new, old, dry_run)


def _admission_writes(rt: ResourceType, namespace: str, updating: bool) -> bool:
    return any(plugin.writes(rt, namespace, updating) for plugin in ADMISSION_PLUGINS)


def _random_suffix(n: int = 5) -> str:
    return "".join(secrets.choice(_NAME_ALPHABET) for _ in range(n))


def _content(obj: Object) -> Object:
    """What ``generation`` tracks: everything but metadata and status."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def _core(rt: ResourceType) -> bool:
    """Whether kube's core rule for unqualified finalizer names applies (not to
    CRDs and custom resources, which apiextensions validates generically)."""
    return rt.group != "apiextensions.k8s.io" and "crd" not in rt.extra


class _NotWritten(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised by an update function to end a guaranteed update without a
    write (nothing changed, or a dry run), with the ``object`` to answer.
    Defined once: a class made per update cost a type object per request,
    which only the cyclic garbage collector frees."""

    def __init__(self, obj: Object) -> None:
        super().__init__()
        self.object = obj


def _without_version(obj: Object) -> Object:
    """``obj`` as a no-op write compares it: without its resourceVersion, and
    without the times of its managedFields entries (a re-apply of a Secret's
    ``stringData`` re-stamps its manager though the stored object stays the same)."""
    meta = {k: v for k, v in (obj.get("metadata") or {}).items() if k != "resourceVersion"}
    managed = meta.get("managedFields")
    if isinstance(managed, list):
        meta["managedFields"] = [
            {k: v for k, v in e.items() if k != "time"} if isinstance(e, dict) else e
            for e in managed
        ]
    return {**obj, "metadata": meta}


class Registry(PatchMixin):
    """Verbs on resource types, over a ``Storage``."""

    def __init__(self, storage: Storage | None = None, admit=None) -> None:
        """``admit(new, old)`` (old None on create) may refuse a write with a
        ``StatusError`` after validation, before storage (RBAC escalation checks)."""
        self.storage = storage or default_storage()
        self.admit = admit

    # -- helpers ---------------------------------------------------------------
    @staticmethod
    def key(rt: ResourceType, namespace: str, name: str) -> Key:
        return Key(rt.stored_group, rt.stored_resource, namespace if rt.namespaced else "", name)

    def _out(self, rt: ResourceType, stored: Object) -> Object:
        return rt.strategy.from_storage(stored, rt.version)

    def from_storage(self, rt: ResourceType, stored: Object) -> Object:
        """The served form of a stored object (watch events). MAY mutate ``stored``."""
        return self._out(rt, stored)

    def serves_stored_form(self, rt: ResourceType) -> bool:
        """Whether ``from_storage`` leaves every stored object of ``rt`` as it is."""
        return rt.strategy.serves_stored_form(rt.version)

    def _in(self, rt: ResourceType, obj: Object) -> Object:
        return rt.strategy.to_storage(obj, rt.version)

    def _check_type(self, rt: ResourceType, obj: Any) -> Object:
        if not isinstance(obj, dict):
            raise errors.bad_request("the body of the request must be a JSON or YAML object")
        api_version = obj.get("apiVersion")
        kind = obj.get("kind")
        if api_version is not None and api_version != rt.api_version:
            raise errors.bad_request(
                f"the API version in the data ({api_version}) does not match the expected "
                f"API version ({rt.api_version})"
            )
        if kind is not None and kind != rt.kind:
            raise errors.bad_request(
                f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})"
            )
        obj = deep_copy(obj)
        obj["apiVersion"] = rt.api_version
        obj["kind"] = rt.kind
        meta = obj.get("metadata")
        if meta is None:
            obj["metadata"] = {}
        elif not isinstance(meta, dict):
            raise errors.bad_request("metadata must be an object")
        return obj

    def _check_namespace(self, rt: ResourceType, obj: Object, namespace: str) -> None:
        meta = obj["metadata"]
        if rt.namespaced:
            body_ns = meta.get("namespace")
            if body_ns and body_ns != namespace:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)

    def _before_write(self, rt: ResourceType, obj: Object, deleted: bool = False) -> None:
        for observer in BEFORE_WRITE_OBSERVERS:
            observer(rt, obj, deleted)

    def _written(self, rt: ResourceType, obj: Object, deleted: bool = False) -> Object:
        for observer in WRITE_OBSERVERS:
            observer(rt, obj, deleted)
        return obj

    def _invalid(self, rt: ResourceType, name: str, causes: list[Cause]) -> StatusError:
        return errors.invalid(rt.group, rt.kind, name, causes)

    def _namespace_key(self, rt: ResourceType, namespace: str) -> Key | None:
        """The key of the Namespace a create of ``rt`` must be admitted by."""
        if not rt.namespaced:
            return None
        return self.key(catalog().lookup("", "v1", "namespaces"), "", namespace)

    def _exists(self, key: Key) -> bool:
        try:
            self.storage.get(key)
        except KeyNotFound:
            return False
        return True

    def _namespace_must_be_active(self, rt: ResourceType, namespace: str, name: str) -> None:
        """kube's NamespaceLifecycle admission as a read, for the paths that end
        before storage: the write itself checks it in the same statement."""
        ns_key = self._namespace_key(rt, namespace)
        if ns_key is None:
            return
        try:
            ns = self.storage.get(ns_key)
        except KeyNotFound:
            raise errors.not_found("", "namespaces", namespace) from None
        if (ns.get("status") or {}).get("phase") == "Terminating":
            raise errors.namespace_terminating(rt.group, rt.plural, name, namespace)

    # -- create ----------------------------------------------------------------
    def create(
        self, rt: ResourceType, namespace: str, body: Any, options: CreateOptions | None = None
    ) -> Object:
        options = options or CreateOptions()
        obj = self._check_type(rt, body)
        check_fields(rt, obj, options)
        return self._create(rt, namespace, obj, options, lambda o: manage_fields(rt, None, o, options))

    @contextmanager
    def _serialized(self, rt: ResourceType) -> Iterator[None]:
        """The type's writes one at a time (``Strategy.serialize_writes``)."""
        if rt.strategy.serialize_writes:
            with self.storage.exclusive(f"writes:{rt.stored_group}/{rt.stored_resource}"):
                yield
        else:
            yield

    def _create(self, rt: ResourceType, namespace: str, obj: Object, options: CreateOptions, manage) -> Object:
        """Creates ``obj`` (already type-checked); ``manage(obj)`` sets its
        managedFields once the strategy has prepared it."""
        with self._serialized(rt):
            self._check_namespace(rt, obj, namespace)
            meta = obj["metadata"]
            if meta.get("resourceVersion"):
                raise errors.bad_request("resourceVersion should not be set on objects to be created")
            requested_name = meta.get("name", "")
            try:
                generate = self._prepare_create(rt, obj, manage)
            except StatusError:
                # kube admits the namespace (mutating admission) before it validates:
                # a missing or terminating namespace answers first.
                self._namespace_must_be_active(rt, namespace, requested_name)
                raise
            if options.dry_run:
                # Every check of the real create but the write: the namespace, and
                # the name being free (kube's dry-run store answers AlreadyExists).
                self._namespace_must_be_active(rt, namespace, requested_name)
                if not generate and self._exists(self.key(rt, namespace, meta["name"])):
                    raise errors.already_exists(rt.group, rt.plural, meta["name"])
                _admit(rt, namespace, obj, None, True)
                return obj
            # A quota's charge commits with the object: the quota controller's
            # recount then sees both or neither, and cannot undo the charge.
            with self.storage.atomic() if _admission_writes(rt, namespace, False) else nullcontext():
                _admit(rt, namespace, obj, None, False)
                created = self._store_new(rt, namespace, obj, requested_name, generate)
            return self._written(rt, self._out(rt, created))

    def _store_new(self, rt: ResourceType, namespace: str, obj: Object, requested_name: str, generate: bool) -> Object:
        """The create's write (a new name for each clash of a generated one)."""
        meta = obj["metadata"]
        ns_key = self._namespace_key(rt, namespace)
        self._before_write(rt, obj)
        stored = self._in(rt, obj)
        for attempt in range(_GENERATE_NAME_ATTEMPTS if generate else 1):
            try:
                return self.storage.create(self.key(rt, namespace, meta["name"]), stored, ns_key)
            except KeyNotFound:
                raise errors.not_found("", "namespaces", namespace) from None
            except NamespaceTerminating:
                raise errors.namespace_terminating(rt.group, rt.plural, requested_name, namespace) from None
            except KeyExists:
                if not generate or attempt == _GENERATE_NAME_ATTEMPTS - 1:
                    raise errors.already_exists(rt.group, rt.plural, meta["name"]) from None
                meta["name"] = meta["generateName"] + _random_suffix()
                stored = self._in(rt, obj)
        raise AssertionError("unreachable")

    def _prepare_create(self, rt: ResourceType, obj: Object, manage) -> bool:
        """System fields, the strategy, managedFields, validation and admission
        (kube's BeforeCreate); returns whether the name was generated."""
        meta = obj["metadata"]
        # System fields (kube's FillObjectMetaSystemFields).
        meta["uid"] = ids.uuid4()
        meta["creationTimestamp"] = now_rfc3339()
        # Every kind starts at generation 1, as issue #2 asks of all of them. kube
        # sets it only where the kind's strategy does (workloads, CRDs, custom
        # resources, ...): a real cluster's ConfigMaps, Secrets and Services carry
        # no metadata.generation. Kept on purpose: #2's wording is the contract.
        meta["generation"] = 1
        for server_only in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
            meta.pop(server_only, None)
        rt.strategy.prepare_for_create(obj)
        manage(obj)

        generate = not meta.get("name") and meta.get("generateName")
        if generate:
            meta["name"] = meta["generateName"] + _random_suffix()
        causes = validate_object_meta(
            meta, namespaced=rt.namespaced, name_rule=rt.name_rule, core_finalizers=_core(rt)
        )
        causes += rt.strategy.validate(obj)
        if causes:
            raise self._invalid(rt, meta.get("name", ""), causes)
        if self.admit is not None:
            self.admit(obj, None)
        return bool(generate)

    # -- get / list ------------------------------------------------------------
    def get(self, rt: ResourceType, namespace: str, name: str) -> Object:
        try:
            return self._out(rt, self.storage.get(self.key(rt, namespace, name)))
        except KeyNotFound:
            raise errors.not_found(rt.group, rt.plural, name) from None

    def list(self, rt: ResourceType, namespace: str | None, options: ListOptions | None = None) -> Object:
        """A ``<Kind>List``; ``namespace`` None lists across all namespaces."""
        try:
            page = self.storage.list(self._list_query(rt, namespace, options))
        except ResourceVersionExpired as exc:
            raise errors.expired(exc.message or "too old resource version") from None
        items = [self._out(rt, item) for item in page.items]
        out_meta: dict[str, Any] = {"resourceVersion": str(page.revision)}
        if page.last_key is not None:
            out_meta["_last_key"] = page.last_key
            if page.remaining is not None:
                out_meta["remainingItemCount"] = page.remaining
        return {
            "kind": rt.list_kind,
            "apiVersion": rt.api_version,
            "metadata": out_meta,
            "items": items,
        }

    def list_stored_json(self, rt: ResourceType, namespace: str | None, options: ListOptions | None = None) -> EncodedPage:
        """``list`` of a resource whose served form is the stored form
        (``serves_stored_form``), each item as its JSON, never all parsed."""
        try:
            return self.storage.list_page_encoded(self._list_query(rt, namespace, options))
        except ResourceVersionExpired as exc:
            raise errors.expired(exc.message or "too old resource version") from None

    @staticmethod
    def _list_query(rt: ResourceType, namespace: str | None, options: ListOptions | None) -> ListQuery:
        options = options or ListOptions()
        return ListQuery(
            group=rt.stored_group,
            resource=rt.stored_resource,
            namespace=(namespace if rt.namespaced else None),
            labels=options.label_selector,
            fields=options.field_selector,
            limit=options.limit,
            after=options.after,
            at_revision=options.at_revision,
            count_remaining=options.count_remaining,
            remaining_before=options.remaining_before,
        )

    # -- update ------------------------------------------------------------------
    def update(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        body: Any,
        options: UpdateOptions | None = None,
    ) -> tuple[Object, bool]:
        """PUT. Returns (object, created)."""
        options = options or UpdateOptions()
        obj = self._check_type(rt, body)
        check_fields(rt, obj, options)
        meta = obj["metadata"]
        if meta.get("name") and meta["name"] != name:
            raise errors.bad_request(
                f"the name of the object ({meta['name']}) does not match the name on the URL ({name})"
            )
        meta["name"] = name
        self._check_namespace(rt, obj, namespace)
        requested_rv = meta.get("resourceVersion") or ""
        if not requested_rv and not rt.strategy.allow_unconditional_update:
            raise self._invalid(
                rt, name, [Cause("FieldValueInvalid", "Invalid value: 0x0: must be specified for an update", "metadata.resourceVersion")]
            )
        key = self.key(rt, namespace, name)

        def try_update(current_stored: Object) -> Object:
            current = self._out(rt, current_stored)
            if requested_rv and requested_rv != current["metadata"]["resourceVersion"]:
                raise errors.conflict(rt.group, rt.plural, name, _MODIFIED)
            new = deep_copy(obj)
            self._prepare_update(rt, new, current, options.subresource, options)
            return new

        return self._guaranteed_update(rt, key, name, try_update, options.dry_run), False

    def update_with(
        self,
        rt: ResourceType,
        namespace: str,
        name: str,
        mutate,
        options: UpdateOptions | None = None,
        preconditions: Preconditions | None = None,
    ) -> Object:
        """Read-modify-write for in-process writers: ``mutate(obj)`` edits a copy of
        the current object (and may raise); the result goes through the same
        preparation and validation as a PUT."""
        options = options or UpdateOptions()
        key = self.key(rt, namespace, name)

        def try_update(current_stored: Object) -> Object:
            current = self._out(rt, current_stored)
            new = deep_copy(current)
            new = mutate(new) or new
            new = self._check_type(rt, new)
            self._check_namespace(rt, new, namespace)
            self._prepare_update(rt, new, current, options.subresource, options)
            return new

        return self._guaranteed_update(rt, key, name, try_update, options.dry_run, preconditions)

    def _prepare_update(
        self,
        rt: ResourceType,
        new: Object,
        current: Object,
        subresource: str,
        options: UpdateOptions | None = None,
    ) -> None:
        """System fields, strategy, managedFields (when ``options`` name the writer)
        and validation for an update (kube's BeforeUpdate). Mutates ``new``."""
        meta = new["metadata"]
        cur_meta = current["metadata"]
        if subresource == "status":
            rt.strategy.prepare_for_status_update(new, current)
            # A status write changes nothing in metadata but what kube lets it
            # (a Deployment's annotations: its controller's revision).
            kept = {k: meta[k] for k in rt.strategy.status_metadata if k in meta}
            new["metadata"] = meta = {**cur_meta}
            for key in rt.strategy.status_metadata:
                meta.pop(key, None)
            meta.update(kept)
        elif subresource:
            meta["generation"] = cur_meta.get("generation", 1)
            rt.strategy.prepare_for_subresource_update(subresource, new, current)
        else:
            meta["generation"] = cur_meta.get("generation", 1)
            rt.strategy.prepare_for_update(new, current)
        if not meta.get("uid"):
            meta["uid"] = cur_meta.get("uid")
        for kept in ("creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
            if kept in cur_meta:
                meta[kept] = cur_meta[kept]
            elif kept != "deletionTimestamp":
                # An update never starts a deletion: a deletionTimestamp set by the
                # client is left for validation to refuse as immutable (kube's error).
                meta.pop(kept, None)
        if not meta.get("resourceVersion"):
            meta["resourceVersion"] = cur_meta["resourceVersion"]
        if options is not None:
            manage_fields(rt, current, new, options)
        causes = validate_object_meta_update(meta, cur_meta, core_finalizers=_core(rt))
        causes += rt.strategy.validate_update(new, current)
        if causes:
            raise self._invalid(rt, meta.get("name", ""), causes)
        if _content(new) != _content(current):
            meta["generation"] = int(cur_meta.get("generation") or 0) + 1

    def _guaranteed_update(
        self,
        rt: ResourceType,
        key: Key,
        name: str,
        try_update,
        dry_run: bool,
        preconditions: Preconditions | None = None,
    ) -> Object:
        with self._serialized(rt):

            def storage_update(current_stored: Object) -> Object:
                new = try_update(current_stored)
                current = self._out(rt, current_stored)
                if self.admit is not None:
                    self.admit(new, current)
                if _without_version(new) == _without_version(current):
                    # Nothing to write: kube answers with the stored object, same version.
                    raise _NotWritten(current)
                _admit(rt, key.namespace, new, current, dry_run)
                if dry_run:
                    raise _NotWritten(new)
                self._before_write(rt, new)
                return self._in(rt, new)

            try:
                with _as_status(rt, name):
                    stored = self.storage.guaranteed_update(
                        key, storage_update, preconditions,
                        atomic_attempts=not dry_run and _admission_writes(rt, key.namespace, True),
                    )
            except _NotWritten as answer:
                return answer.object
            out = self._written(rt, self._out(rt, stored))
            if "deletionTimestamp" in out["metadata"] and not rt.strategy.pending_finalizers(out):
                return self._finish_deletion(rt, key, out)
            return out

    # -- delete ------------------------------------------------------------------
    def delete(
        self, rt: ResourceType, namespace: str, name: str, options: DeleteOptions | None = None
    ) -> tuple[Object, bool]:
        """Returns (the object as it now stands or stood last, deleted_now)."""
        options = options or DeleteOptions()
        key = self.key(rt, namespace, name)
        try:
            current = self._out(rt, self.storage.get(key))
        except KeyNotFound:
            raise errors.not_found(rt.group, rt.plural, name) from None
        try:
            check_preconditions(key, current, options.preconditions)
        except ResourceVersionConflict as exc:
            raise errors.conflict(rt.group, rt.plural, name, exc.message) from None
        rt.strategy.check_delete(current)
        if (
            options.propagation_policy is None
            and rt.strategy.orphan_by_default
            and not set(current["metadata"].get("finalizers") or ()) & set(GC_FINALIZERS)
        ):
            options = dataclasses.replace(options, propagation_policy="Orphan")
        finalizers = _finalizers_for_policy(current, options.propagation_policy)
        if finalizers != (current["metadata"].get("finalizers") or []) or rt.strategy.pending_finalizers(
            current
        ):
            out = self._start_graceful_deletion(rt, key, name, current, options)
            return out, not options.dry_run and not rt.strategy.pending_finalizers(out)
        if options.dry_run:
            return current, True
        self._before_write(rt, current, deleted=True)
        with _as_status(rt, name):
            try:
                # At the version just read and checked: one statement, no
                # second read (a namespace purge makes thousands of these).
                deleted = self.storage.delete(key, int(current["metadata"]["resourceVersion"]))
            except ResourceVersionConflict:
                if options.preconditions and options.preconditions.resource_version is not None:
                    raise
                # Written meanwhile: read, check the preconditions, delete again.
                deleted = self.storage.guaranteed_delete(key, options.preconditions)
        return self._written(rt, self._out(rt, deleted), deleted=True), True

    def _start_graceful_deletion(
        self,
        rt: ResourceType,
        key: Key,
        name: str,
        current: Object,
        options: DeleteOptions,
    ) -> Object:
        """Mark the object as being deleted (kube's updateForGracefulDeletionAndFinalizers):
        ``deletionTimestamp`` once, the garbage collector's finalizers as the policy
        asks. The write that leaves no finalizers removes the object."""

        def mark(obj: Object) -> Object:
            meta = obj["metadata"]
            meta["finalizers"] = _finalizers_for_policy(obj, options.propagation_policy)
            if not meta["finalizers"]:
                del meta["finalizers"]
            if "deletionTimestamp" not in meta:
                meta["deletionTimestamp"] = now_rfc3339()
                # Only pods delete gracefully; everything else is marked with 0.
                meta["deletionGracePeriodSeconds"] = 0
                rt.strategy.prepare_for_graceful_delete(obj)
            return obj

        if options.dry_run or (
            "deletionTimestamp" in current["metadata"]
            and _finalizers_for_policy(current, options.propagation_policy)
            == (current["metadata"].get("finalizers") or [])
        ):
            # Nothing to write: already deleting with the finalizers the policy wants.
            return mark(copy.deepcopy(current))

        def try_update(current_stored: Object) -> Object:
            marked = mark(self._out(rt, current_stored))
            self._before_write(rt, marked)
            return self._in(rt, marked)

        with _as_status(rt, name):
            stored = self.storage.guaranteed_update(key, try_update, options.preconditions)
        out = self._written(rt, self._out(rt, stored))
        if not rt.strategy.pending_finalizers(out):
            return self._finish_deletion(rt, key, out)
        return out

    def _finish_deletion(self, rt: ResourceType, key: Key, obj: Object) -> Object:
        """The write that empties the finalizers of a deleting object removes it.
        Another write in between (a controller's status) does not keep it: kube
        removes it in the same update; here it is deleted at the newer version,
        unless that version is no longer deleting or has finalizers again."""
        for _ in range(16):
            self._before_write(rt, obj, deleted=True)
            try:
                deleted = self.storage.delete(key, int(obj["metadata"]["resourceVersion"]))
            except KeyNotFound:
                return obj
            except ResourceVersionConflict:
                try:
                    obj = self._out(rt, self.storage.get(key))
                except KeyNotFound:
                    return obj
                if "deletionTimestamp" not in obj["metadata"] or rt.strategy.pending_finalizers(obj):
                    return obj
                continue
            return self._written(rt, self._out(rt, deleted), deleted=True)
        return obj

    def delete_collection(
        self, rt: ResourceType, namespace: str | None, list_options: ListOptions, options: DeleteOptions
    ) -> Object:
        listed = self.list(rt, namespace, list_options)
        deleted = []
        for item in listed["items"]:
            meta = item["metadata"]
            try:
                obj, _ = self.delete(rt, meta.get("namespace", ""), meta["name"], options)
            except StatusError as exc:
                if exc.code == 404:
                    continue
                raise
            deleted.append(obj)
        listed["items"] = deleted
        listed["metadata"].pop("_last_key", None)
        return listed


@contextmanager
def _as_status(rt: ResourceType, name: str) -> Iterator[None]:
    """Storage's key errors as the API's: 404 NotFound, 409 Conflict."""
    try:
        yield
    except KeyNotFound:
        raise errors.not_found(rt.group, rt.plural, name) from None
    except ResourceVersionConflict as exc:
        raise errors.conflict(rt.group, rt.plural, name, exc.message or _MODIFIED) from None


def _finalizers_for_policy(obj: Object, policy: str | None) -> list[str]:
    """The object's finalizers once the propagation policy is applied
    (kube's deletionFinalizersForGarbageCollection): ``Orphan`` adds ``orphan``,
    ``Foreground`` adds ``foregroundDeletion``, ``Background`` removes both, no
    policy keeps what the object has."""
    current = list((obj.get("metadata") or {}).get("finalizers") or [])
    if policy is None:
        return current
    kept = [f for f in current if f not in GC_FINALIZERS]
    if policy == "Orphan":
        kept.append(ORPHAN)
    elif policy == "Foreground":
        kept.append(FOREGROUND)
    return kept
