"""Validate, apply and prune a rendered set of objects for one Sync.

The engine behind a reconcile and behind validate-on-push, through the
registry only (one write path: resourceVersion, validation, managedFields and
the change log apply to every object the sync writes):

* ``plan`` maps each object to its resource type (a custom resource whose CRD
  comes in the same set gets a type built from that CRD), namespace and labels;
* ``validate`` dry-runs every object by server-side apply as ``kapi-sync`` with
  ``fieldValidation=Strict``; objects whose CRD or Namespace is not there yet
  are validated offline against what the set brings. It returns every problem;
* ``apply`` writes CRDs first (and waits until they are served), then
  Namespaces, then the rest;
* ``prune`` deletes inventory entries missing from the new set, custom
  resources before CRDs, namespaces last, and only objects still labelled as
  this Sync's and not annotated ``sync.kapi.dev/prune: disabled``.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from kapi import errors
from kapi.kinds.custom import types_for_crd
from kapi.patch import APPLY_PATCH
from kapi.registry.catalog import catalog
from kapi.registry.fields import check_fields
from kapi.registry.options import DeleteOptions, PatchOptions
from kapi.registry.resource import ResourceType
from kapi.registry.store import Registry
from kapi.storage import KeyNotFound
from kapi.storage.interface import ListQuery
from kapi.validation.metadata import validate_object_meta
from sync import driftpolicy
from sync.deadline import TimeoutExceeded
from sync.deadline import check as check_deadline
from sync.kinds import LABEL_NAME, LABEL_NAMESPACE, PRUNE_ANNOTATION
from sync.plan import Plan

__all__ = [
    "FIELD_MANAGER",
    "Doomed",
    "Entry",
    "Outcome",
    "Problem",
    "TimeoutExceeded",
    "apply",
    "authorize",
    "authorize_prune",
    "doomed",
    "inventory_entries",
    "live_objects",
    "parse_id",
    "plan",
    "prune",
    "validate",
]

FIELD_MANAGER = "kapi-sync"
CRD_GROUP = "apiextensions.k8s.io"
ESTABLISH_TIMEOUT = 30.0
Object = dict[str, Any]


@dataclass
class Problem:
    """One invalid object: ``subject`` names it, ``field`` is a field path."""

    subject: str
    message: str
    field: str = ""

    def __str__(self) -> str:
        where = f" {self.field}:" if self.field else ""
        return f"{self.subject}:{where} {self.message}"


@dataclass
class Entry:
    obj: Object
    group: str
    version: str
    kind: str
    namespace: str
    name: str
    rt: ResourceType | None = None
    # The type comes from a CRD in the same set (not served yet).
    pending_type: bool = False
    # sync.driftpolicy: the object's apply policy, and fields left to others.
    policy: str = ""
    ignore: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.namespace}_{self.name}_{self.group}_{self.kind}"

    @property
    def subject(self) -> str:
        kind = f"{self.kind}.{self.group}" if self.group else self.kind
        return f"{kind} {self.namespace + '/' if self.namespace else ''}{self.name}"

    @property
    def rank(self) -> int:
        if self.group == CRD_GROUP and self.kind == "CustomResourceDefinition":
            return 0
        if self.group == "" and self.kind == "Namespace":
            return 1
        return 2


@dataclass
class Outcome:
    applied: int = 0
    unchanged: int = 0
    pruned: int = 0
    kept: int = 0
    changed: list[str] = field(default_factory=list)
    #: 403 messages of objects a finalizer's prune was not allowed to delete.
    forbidden: list[str] = field(default_factory=list)


def _split(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def parse_id(entry: dict) -> tuple[str, str, str, str, str]:
    """(namespace, name, group, kind, version) of an inventory entry."""
    parts = str(entry.get("id", "")).split("_")
    if len(parts) < 4:
        raise ValueError(f"bad inventory id {entry.get('id')!r}")
    return parts[0], "_".join(parts[1:-2]), parts[-2], parts[-1], str(entry.get("v", ""))


def inventory_entries(entries: Iterable[Entry]) -> list[dict]:
    return sorted(({"id": e.id, "v": e.version} for e in entries), key=lambda d: d["id"])


def _set_types(objects: list[Object]) -> dict[tuple[str, str, str], ResourceType]:
    """Types defined by CRDs inside the set, keyed by (group, version, kind)."""
    out = {}
    for obj in objects:
        if obj.get("apiVersion") != f"{CRD_GROUP}/v1" or obj.get("kind") != "CustomResourceDefinition":
            continue
        crd = copy.deepcopy(obj)
        crd["status"] = {"conditions": [{"type": "Established", "status": "True"}]}
        try:
            for rt in types_for_crd(crd):
                out[(rt.group, rt.version, rt.kind)] = rt
        except Exception:  # an invalid CRD is reported by its own validation
            continue
    return out


def plan(objects: list[Object], sync_namespace: str, sync_name: str,
         target_namespace: str = "", ignore_rules: list[dict] | None = None,
         resolve: Callable[[str, str, str], Any] | None = None) -> tuple[list[Entry], list[Problem]]:
    """Entries for ``objects`` (types, namespaces and sync labels set) and problems;
    ``ignore_rules`` is the Sync's ``spec.driftIgnoreRules`` (``sync.driftpolicy``);
    ``resolve(group, version, kind)``: the served type (default: this server's;
    a remote target's discovery, ``sync.remoteapply``), anything with
    ``plural`` and ``namespaced``."""
    resolve = resolve or catalog(fresh=True).for_kind
    in_set = _set_types(objects)
    entries: list[Entry] = []
    problems: list[Problem] = []
    seen: dict[str, Entry] = {}
    for raw in objects:
        obj = copy.deepcopy(raw)
        group, version = _split(str(obj["apiVersion"]))
        kind = str(obj["kind"])
        meta = obj["metadata"]
        name = str(meta["name"])
        rt = resolve(group, version, kind)
        pending = False
        if rt is None and (group, version, kind) in in_set:
            rt, pending = in_set[(group, version, kind)], True
        if rt is None:
            problems.append(Problem(f"{kind} {name}", f'no matches for kind "{kind}" in version "{obj["apiVersion"]}"'))
            continue
        if rt.namespaced:
            meta["namespace"] = target_namespace or meta.get("namespace") or sync_namespace
        else:
            meta.pop("namespace", None)
        labels = meta.get("labels")
        if not isinstance(labels, dict):
            labels = meta["labels"] = {}
        labels[LABEL_NAME] = sync_name
        labels[LABEL_NAMESPACE] = sync_namespace
        entry = Entry(obj, group, version, kind, meta.get("namespace", ""), name, rt, pending,
                      driftpolicy.policy(obj),
                      driftpolicy.ignored_paths(ignore_rules, group, version, kind, meta.get("namespace", ""), obj))
        if entry.id in seen:
            problems.append(Problem(entry.subject, "appears more than once in the revision"))
            continue
        seen[entry.id] = entry
        entries.append(entry)
    entries.sort(key=lambda e: e.rank)  # stable: file order within a rank
    return entries, problems


def _problems_of(subject: str, exc: errors.StatusError) -> list[Problem]:
    causes = ((exc.status.get("details") or {}).get("causes")) or []
    if exc.reason == "Invalid" and causes:
        return [Problem(subject, c.get("message", ""), c.get("field", "")) for c in causes]
    return [Problem(subject, exc.status.get("message", str(exc)))]


def _owner(obj: Object) -> tuple[str, str] | None:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    if LABEL_NAME in labels:
        return labels.get(LABEL_NAMESPACE, ""), labels[LABEL_NAME]
    return None


def _options(dry_run: bool) -> PatchOptions:
    return PatchOptions(dry_run=dry_run, field_manager=FIELD_MANAGER, force=True, field_validation="Strict")


def _offline(entry: Entry) -> list[Problem]:
    """Validate a new object whose type or namespace only the set brings."""
    rt = entry.rt
    assert rt is not None
    obj = copy.deepcopy(entry.obj)
    try:
        obj = Registry._check_type(None, rt, obj)  # type: ignore[arg-type]
        check_fields(rt, obj, _options(True), strict_code=422)
    except errors.StatusError as exc:
        return _problems_of(entry.subject, exc)
    rt.strategy.prepare_for_create(obj)
    causes = validate_object_meta(obj["metadata"], namespaced=rt.namespaced, name_rule=rt.name_rule,
                                  core_finalizers=False)
    causes += rt.strategy.validate(obj)
    return [Problem(entry.subject, c.message, c.field) for c in causes]


def authorize(entries: list[Entry], user, registry: Registry | None = None) -> list[Problem]:
    """A problem (kube's 403 text) for every entry ``user`` may not apply:
    server-side apply is a patch, and a patch that creates also needs create
    (kube's patch handler). RBAC answers from memory; only entries that may be
    patched but not created need to know whether they exist, read in bulk."""
    from kapi.auth import access

    registry = registry or Registry()
    problems: dict[str, Problem] = {}
    existing_only: list[tuple[Entry, errors.StatusError]] = []
    for entry in entries:
        rt = entry.rt
        if rt is None or entry.policy == driftpolicy.IGNORE:
            continue
        try:
            access.check(user, "patch", rt, entry.namespace, entry.name)
        except errors.StatusError as exc:
            problems[entry.id] = Problem(entry.subject, exc.status.get("message", "forbidden"))
            continue
        try:
            access.check(user, "create", rt, entry.namespace, entry.name)
        except errors.StatusError as exc:
            if entry.pending_type:
                problems[entry.id] = Problem(entry.subject, exc.status.get("message", "forbidden"))
            else:
                existing_only.append((entry, exc))
    if existing_only:
        live = live_objects([entry for entry, _ in existing_only], registry)
        for entry, exc in existing_only:
            if entry.id not in live:
                problems[entry.id] = Problem(entry.subject, exc.status.get("message", "forbidden"))
    return [problems[e.id] for e in entries if e.id in problems]


def validate(entries: list[Entry], sync_namespace: str, sync_name: str,
             registry: Registry | None = None, deadline: float | None = None,
             force_recreate: bool = False, plan: Plan | None = None) -> list[Problem]:
    """Every problem a server-side dry-run apply of ``entries`` finds (writes nothing).

    ``force_recreate`` (a Sync's ``spec.force``): an object whose change only
    an immutable field refuses will be deleted and created again by ``apply``,
    so it is validated as the new object it will be. ``plan`` collects what
    applying would create and change (``sync.plan``).
    Raises ``TimeoutExceeded`` once ``time.time()`` passes ``deadline``."""
    registry = registry or Registry()
    problems: list[Problem] = []
    ns_type = catalog().lookup("", "v1", "namespaces")
    new_namespaces = {e.name for e in entries if e.rank == 1}
    existing: dict[str, bool] = {}
    for index, entry in enumerate(entries):
        check_deadline(deadline, "validating", index, len(entries))
        rt = entry.rt
        assert rt is not None
        live = None
        if not entry.pending_type:
            try:
                live = registry.storage.get(registry.key(rt, entry.namespace, entry.name))
            except KeyNotFound:
                live = None
        if entry.policy == driftpolicy.IGNORE or (entry.policy == driftpolicy.IF_NOT_PRESENT and live):
            if plan is not None:
                plan.unchanged += 1
            continue
        owner = _owner(live) if live else None
        if owner and owner != (sync_namespace, sync_name):
            problems.append(Problem(
                entry.subject, f"already managed by Sync {owner[0]}/{owner[1]}; not taking it over"))
            continue
        ns_missing = False
        if rt.namespaced and live is None:
            if entry.namespace not in existing:
                try:
                    registry.storage.get(registry.key(ns_type, "", entry.namespace))
                    existing[entry.namespace] = True
                except KeyNotFound:
                    existing[entry.namespace] = False
            ns_missing = not existing[entry.namespace]
            if ns_missing and entry.namespace not in new_namespaces:
                problems.append(Problem(entry.subject, f'namespace "{entry.namespace}" not found'))
                continue
        if entry.pending_type or ns_missing:
            problems.extend(_offline(entry))
            if plan is not None:
                plan.record(entry.subject, entry.kind, None, entry.obj)
            continue
        served = registry.from_storage(rt, copy.deepcopy(live)) if live is not None else None
        config = driftpolicy.with_live_values(entry.obj, served, entry.ignore) if served else entry.obj
        try:
            after, _ = registry.patch(rt, entry.namespace, entry.name, APPLY_PATCH, config, _options(True))
        except errors.StatusError as exc:
            if force_recreate and _immutable(exc):
                problems.extend(_offline(entry))
                if plan is not None:
                    plan.record(f"{entry.subject} (recreated)", entry.kind, None, entry.obj)
            else:
                problems.extend(_problems_of(entry.subject, exc))
            continue
        if plan is not None:
            plan.record(entry.subject, entry.kind, served, after)
    return problems


def _wait_served(entries: list[Entry], timeout: float, until: float | None = None) -> None:
    """Re-resolve types of pending entries once their CRDs are served (at most
    ``timeout`` seconds, and not past the epoch time ``until``)."""
    deadline = time.monotonic() + timeout
    if until is not None:
        deadline = min(deadline, time.monotonic() + max(0.0, until - time.time()))
    for entry in entries:
        if not entry.pending_type:
            continue
        while True:
            rt = catalog(fresh=True).for_kind(entry.group, entry.version, entry.kind)
            if rt is not None:
                entry.rt, entry.pending_type = rt, False
                break
            if time.monotonic() > deadline:
                raise errors.StatusError(errors.status_failure(
                    504, "Timeout", f"CustomResourceDefinition for {entry.kind}.{entry.group} not established"))
            time.sleep(0.1)


def _immutable(exc: errors.StatusError) -> bool:
    return exc.code == 422 and "immutable" in exc.status.get("message", "")


def live_objects(entries: list[Entry], registry: Registry) -> dict[str, Object]:
    """The live objects of ``entries`` (served form) by entry id, read with one
    list per type and namespace (by name) instead of one read per object.
    Objects that do not exist are absent."""
    groups: dict[tuple[str, str, str], list[Entry]] = {}
    for entry in entries:
        if entry.rt is not None and not entry.pending_type:
            key = registry.key(entry.rt, entry.namespace, entry.name)
            groups.setdefault((key.group, key.resource, key.namespace), []).append(entry)
    out: dict[str, Object] = {}
    for (group, resource, namespace), members in groups.items():
        names = sorted({entry.name for entry in members})
        page = registry.storage.list(ListQuery(group, resource, namespace, names=tuple(names)))
        stored = {item["metadata"]["name"]: item for item in page.items}
        for entry in members:
            if entry.name in stored:
                out[entry.id] = registry.from_storage(entry.rt, stored[entry.name])
    return out


def _covers(want: Any, have: Any) -> bool:
    """Every value ``want`` sets is in ``have`` (maps: key by key; lists: same
    length, item by item, so defaults the server added to items still count
    as covered; scalars: equal and of the same JSON type)."""
    if isinstance(want, dict):
        return isinstance(have, dict) and all(k in have and _covers(v, have[k]) for k, v in want.items())
    if isinstance(want, list):
        return isinstance(have, list) and len(want) == len(have) and all(map(_covers, want, have))
    return type(want) is type(have) and want == have


def _in_place(entry: Entry, live: Object | None, config: Object) -> bool:
    """Would applying ``entry`` again change nothing? Only asked when the same
    configuration was applied before (same rendered input, same spec), so
    kapi-sync's field set is the one this configuration gives. Then a no-op
    needs: the object exists; no other manager wrote it after kapi-sync's
    apply (status writes aside: kapi-sync owns no status); every value the
    configuration sets is live. Anything else takes the full apply."""
    if live is None or "status" in entry.obj:
        return False
    entries = [e for e in (live.get("metadata") or {}).get("managedFields") or []
               if e.get("subresource") != "status"]
    ours = [e for e in entries if e.get("manager") == FIELD_MANAGER and e.get("operation") == "Apply"]
    if len(ours) != 1:
        return False
    applied_at = ours[0].get("time") or ""
    if any(e.get("manager") != FIELD_MANAGER and (e.get("time") or "") >= applied_at for e in entries):
        return False
    return _covers(config, live)


def apply(entries: list[Entry], *, force_recreate: bool = False, registry: Registry | None = None,
          progress: Callable[[str], None] | None = None, deadline: float | None = None,
          reapply: bool = False) -> Outcome:
    """Server-side apply in dependency order; raises the first ``StatusError``, or
    ``TimeoutExceeded`` once ``time.time()`` passes ``deadline``.

    ``reapply``: these exact configurations were all applied before (the
    Sync's last applied input). The live objects are then read in bulk and
    only those that drifted (``_in_place`` is false) go through apply; the
    rest count as unchanged without a request each."""
    registry = registry or Registry()
    outcome = Outcome()
    live = live_objects(entries, registry) if reapply else {}
    for index, entry in enumerate(entries):
        check_deadline(deadline, "applying", index, len(entries))
        if entry.rank == 2 and index and entries[index - 1].rank < 2:
            _wait_served(entries, ESTABLISH_TIMEOUT, deadline)
        rt = entry.rt
        assert rt is not None
        if entry.policy == driftpolicy.IGNORE:
            outcome.unchanged += 1
            continue
        key = registry.key(rt, entry.namespace, entry.name)
        current = live.get(entry.id)
        if current is None:
            try:
                current = registry.storage.get(key)
                if entry.ignore:
                    current = registry.from_storage(rt, current)
            except KeyNotFound:
                current = None
        if entry.policy == driftpolicy.IF_NOT_PRESENT and current is not None:
            outcome.unchanged += 1
            continue
        config = driftpolicy.with_live_values(entry.obj, current, entry.ignore) if current else entry.obj
        if reapply and _in_place(entry, live.get(entry.id), config):
            outcome.unchanged += 1
            continue
        before = current["metadata"].get("resourceVersion") if current else None
        try:
            out, _ = registry.patch(rt, entry.namespace, entry.name, APPLY_PATCH, config, _options(False))
        except errors.StatusError as exc:
            if not (force_recreate and _immutable(exc)):
                raise
            registry.delete(rt, entry.namespace, entry.name, DeleteOptions())
            out, _ = registry.patch(rt, entry.namespace, entry.name, APPLY_PATCH, entry.obj, _options(False))
        if out["metadata"].get("resourceVersion") == before:
            outcome.unchanged += 1
        else:
            outcome.applied += 1
            outcome.changed.append(entry.subject)
        if entry.rank == 0:
            catalog(fresh=True)
        if progress and (index + 1) % 100 == 0:
            progress(f"applied {index + 1}/{len(entries)}")
    _wait_served(entries, ESTABLISH_TIMEOUT, deadline)
    return outcome


def _prune_rank(group: str, kind: str) -> int:
    if group == CRD_GROUP and kind == "CustomResourceDefinition":
        return 1
    if group == "" and kind == "Namespace":
        return 2
    return 0


@dataclass(frozen=True)
class Doomed:
    """An inventory entry a prune would delete."""

    namespace: str
    name: str
    group: str
    kind: str
    version: str

    @property
    def subject(self) -> str:
        kind = f"{self.kind}.{self.group}" if self.group else self.kind
        return f"{kind} {self.namespace + '/' if self.namespace else ''}{self.name}"


def doomed(old: list[dict], keep_ids: set[str]) -> list[Doomed]:
    """The entries of inventory ``old`` not in ``keep_ids``, in deletion order:
    custom resources before CRDs, Namespaces last."""
    out = []
    for item in old:
        if item.get("id") in keep_ids:
            continue
        try:
            out.append(Doomed(*parse_id(item)))
        except ValueError:
            continue
    out.sort(key=lambda d: _prune_rank(d.group, d.kind))
    return out


def _served_type(group: str, version: str, kind: str) -> ResourceType | None:
    served = catalog(fresh=True)
    return served.for_kind(group, version, kind) or next(
        (t for t in served.types() if t.group == group and t.kind == kind), None)


def authorize_prune(targets: list[Doomed], user) -> list[Problem]:
    """A problem (kube's 403 text) for every target ``user`` may not delete."""
    from kapi.auth import access

    problems = []
    for target in targets:
        rt = _served_type(target.group, target.version, target.kind)
        if rt is None:
            continue  # its type is gone, and so is the object
        try:
            access.check(user, "delete", rt, target.namespace, target.name)
        except errors.StatusError as exc:
            problems.append(Problem(target.subject, exc.status.get("message", "forbidden")))
    return problems


def prune(old: list[dict], keep_ids: set[str], sync_namespace: str, sync_name: str,
          outcome: Outcome | None = None, registry: Registry | None = None,
          user=None, deadline: float | None = None, skip_forbidden: bool = False) -> Outcome:
    """Delete inventory entries of ``old`` not in ``keep_ids``; never anything else.

    With ``user`` (the Sync's identity), each delete must be allowed to it: a
    denial raises kube's 403, or, ``skip_forbidden``, leaves that object and
    names it in ``outcome.forbidden`` (a finalizer must not wait forever for
    a binding that the namespace's deletion already removed).
    Raises ``TimeoutExceeded`` once ``time.time()`` passes ``deadline``.
    """
    registry = registry or Registry()
    outcome = outcome or Outcome()
    targets = doomed(old, keep_ids)
    for index, target in enumerate(targets):
        check_deadline(deadline, "pruning", index, len(targets))
        rt = _served_type(target.group, target.version, target.kind)
        if rt is None:
            continue  # its type is gone, and so is the object
        try:
            live = registry.get(rt, target.namespace, target.name)
        except errors.StatusError as exc:
            if exc.code == 404:
                continue
            raise
        meta = live["metadata"]
        if _owner(live) != (sync_namespace, sync_name):
            continue  # taken over or relabelled: not ours to delete
        if (meta.get("annotations") or {}).get(PRUNE_ANNOTATION) == "disabled" or \
                driftpolicy.policy(live) == driftpolicy.IGNORE:
            outcome.kept += 1
            continue
        if user is not None:
            from kapi.auth import access

            try:
                access.check(user, "delete", rt, target.namespace, target.name)
            except errors.StatusError as exc:
                if not skip_forbidden:
                    raise
                outcome.forbidden.append(exc.status.get("message", target.subject))
                continue
        try:
            registry.delete(rt, target.namespace, target.name, DeleteOptions())
        except errors.StatusError as exc:
            if exc.code != 404:
                raise
        outcome.pruned += 1
    return outcome
