"""The sync engine against another API server: what ``sync.apply`` does
through the local registry, done over HTTP (``sync.remoteclient``).

* types come from the target's discovery (a CRD in the same set gives the
  types it brings until the target serves them);
* ``validate``: server-side apply with ``dryRun=All``, ``fieldManager=kapi-sync``,
  ``force``, ``fieldValidation=Strict``; the target's RBAC and admission
  decide, and their answer (a 403, a 422) is the problem, naming the object;
  prunes are dry-run deletes;
* ``apply``: CRDs first (waiting until the target serves them), Namespaces,
  the rest; a re-apply of the last applied input only applies what drifted;
* ``prune``: inventory entries missing from the new set, still labelled as
  this Sync's, deleted with ``propagationPolicy=Background``;
* ``unhealthy``: kstatus of the live objects (``sync.health``).

The kubeconfig's user acts; with ``spec.serviceAccountName`` it impersonates
``system:serviceaccount:<namespace>:<name>`` on the target (as Flux).
A target that cannot be reached stops the pass at the first request.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from kapi import errors
from sync import apply as engine
from sync import driftpolicy, health
from sync.deadline import check as check_deadline
from sync.kinds import LABEL_NAME, PRUNE_ANNOTATION
from sync.plan import Plan
from sync.remoteclient import Client, RemoteType

__all__ = ["RemoteEngine", "object_path"]

APPLY = "application/apply-patch+yaml"


def object_path(rt, namespace: str = "", name: str = "") -> str:
    """The URL path of ``rt`` objects (in ``namespace``), or of one named ``name``."""
    base = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    if rt.namespaced and namespace:
        base += f"/namespaces/{namespace}"
    base += f"/{rt.plural}"
    return f"{base}/{name}" if name else base


def _unreachable(exc: errors.StatusError) -> bool:
    return exc.code == 503 and "cannot be reached" in exc.status.get("message", "")


class RemoteEngine:
    """``sync.apply``'s operations on one target as one identity."""

    def __init__(self, client: Client, impersonate: str = "") -> None:
        self.client = client
        self.impersonate = impersonate

    @property
    def server(self) -> str:
        return self.client.server

    @property
    def version(self) -> str:
        """The target's version (``/version``), cached by the shared client."""
        return self.client.version()

    def authorize(self, entries: list[engine.Entry], doomed: list[engine.Doomed]) -> list[engine.Problem]:
        """The target decides what may be applied (its answer to the dry run,
        ``validate``); what may be pruned is asked here by dry-run deletes."""
        return self.authorize_prune(doomed)

    # -- HTTP -------------------------------------------------------------------------

    def _call(self, method: str, path: str, **kwargs):
        return self.client.request(method, path, impersonate=self.impersonate, **kwargs)

    def get(self, rt, namespace: str, name: str) -> dict | None:
        try:
            return self._call("GET", object_path(rt, namespace, name))
        except errors.StatusError as exc:
            if exc.code == 404:
                return None
            raise

    def _apply(self, entry: engine.Entry, config: dict, dry_run: bool) -> dict:
        query = {"fieldManager": engine.FIELD_MANAGER, "force": "true", "fieldValidation": "Strict"}
        if dry_run:
            query["dryRun"] = "All"
        return self._call("PATCH", object_path(entry.rt, entry.namespace, entry.name), query=query,
                          body=json.dumps(config).encode(), content_type=APPLY)

    def _delete(self, rt, namespace: str, name: str, dry_run: bool = False) -> None:
        query = {"propagationPolicy": "Background"}
        if dry_run:
            query["dryRun"] = "All"
        self._call("DELETE", object_path(rt, namespace, name), query=query)

    def resolve(self, group: str, version: str, kind: str) -> RemoteType | None:
        return self.client.resource(group, version, kind)

    # -- plan -------------------------------------------------------------------------

    def plan(self, objects: list[dict], sync_namespace: str, sync_name: str, target_namespace: str = "",
             ignore_rules: list[dict] | None = None) -> tuple[list[engine.Entry], list[engine.Problem]]:
        return engine.plan(objects, sync_namespace, sync_name, target_namespace, ignore_rules,
                           resolve=self.resolve)

    def live_objects(self, entries: list[engine.Entry]) -> dict[str, dict]:
        """The live objects of ``entries`` labelled as some Sync's (one list per
        type and namespace); an object that is missing here is absent or
        not a Sync's. A list the identity may not do falls back to reads."""
        groups: dict[tuple, list[engine.Entry]] = {}
        for entry in entries:
            if entry.rt is not None and not entry.pending_type:
                groups.setdefault((entry.rt, entry.namespace if entry.rt.namespaced else ""), []).append(entry)
        out: dict[str, dict] = {}
        for (rt, namespace), members in groups.items():
            try:
                listed = self._call("GET", object_path(rt, namespace), query={"labelSelector": LABEL_NAME})
                by_name = {item["metadata"]["name"]: item for item in listed.get("items") or []}
                kind = {"kind": rt.kind, "apiVersion": rt.api_version}
                for entry in members:
                    if entry.name in by_name:
                        out[entry.id] = {**kind, **by_name[entry.name]}
            except errors.StatusError as exc:
                if exc.code != 403:
                    raise
                for entry in members:
                    try:
                        live = self.get(rt, namespace, entry.name)
                    except errors.StatusError as denied:
                        if denied.code != 403:
                            raise
                        continue  # the dry run names the object with the target's 403
                    if live is not None:
                        out[entry.id] = live
        return out

    def _current(self, entry: engine.Entry, live: dict[str, dict]) -> dict | None:
        """The live object of ``entry``: from the bulk read, or read alone when
        its policy or ignore rules must know about an unlabelled one."""
        if entry.id in live:
            return live[entry.id]
        if entry.policy == driftpolicy.IF_NOT_PRESENT or entry.ignore:
            return self.get(entry.rt, entry.namespace, entry.name)
        return None

    # -- validate ---------------------------------------------------------------------

    def authorize_prune(self, targets: list[engine.Doomed]) -> list[engine.Problem]:
        """A problem (the target's answer) for each object a prune may not delete: dry-run deletes."""
        problems = []
        for target in targets:
            rt = self.client.resource(target.group, target.version, target.kind)
            if rt is None:
                continue
            try:
                self._delete(rt, target.namespace, target.name, dry_run=True)
            except errors.StatusError as exc:
                if exc.code == 404:
                    continue
                problems.append(engine.Problem(target.subject, exc.status.get("message", "forbidden")))
                if _unreachable(exc):
                    break
        return problems

    def validate(self, entries: list[engine.Entry], sync_namespace: str, sync_name: str,
                 deadline: float | None = None, force_recreate: bool = False,
                 plan: Plan | None = None) -> list[engine.Problem]:
        """Every problem a dry-run apply on the target finds (writes nothing)."""
        problems: list[engine.Problem] = []
        new_namespaces = {e.name for e in entries if e.rank == 1}
        try:
            live = self.live_objects(entries)
        except errors.StatusError as exc:
            return [engine.Problem(f"target {self.server}", exc.status.get("message", ""))]
        for index, entry in enumerate(entries):
            check_deadline(deadline, "validating", index, len(entries))
            try:
                current = None if entry.pending_type else self._current(entry, live)
            except errors.StatusError as exc:
                problems.append(engine.Problem(entry.subject, exc.status.get("message", "")))
                if _unreachable(exc):
                    break
                continue
            if entry.policy == driftpolicy.IGNORE or (entry.policy == driftpolicy.IF_NOT_PRESENT and current):
                if plan is not None:
                    plan.unchanged += 1
                continue
            owner = engine._owner(current) if current else None
            if owner and owner != (sync_namespace, sync_name):
                problems.append(engine.Problem(
                    entry.subject, f"already managed by Sync {owner[0]}/{owner[1]}; not taking it over"))
                continue
            if entry.pending_type:
                problems.extend(engine._offline(entry))
                if plan is not None:
                    plan.record(entry.subject, entry.kind, None, entry.obj)
                continue
            config = driftpolicy.with_live_values(entry.obj, current, entry.ignore) if current else entry.obj
            try:
                after = self._apply(entry, config, dry_run=True)
            except errors.StatusError as exc:
                if exc.code == 404 and entry.rt.namespaced and entry.namespace in new_namespaces:
                    if plan is not None:  # its Namespace comes in the same set
                        plan.record(entry.subject, entry.kind, None, entry.obj)
                    continue
                if force_recreate and engine._immutable(exc):
                    if plan is not None:
                        plan.record(f"{entry.subject} (recreated)", entry.kind, None, entry.obj)
                    continue
                problems.extend(engine._problems_of(entry.subject, exc))
                if _unreachable(exc):
                    break
                continue
            if plan is not None:
                plan.record(entry.subject, entry.kind, current, after)
        return problems

    # -- apply ------------------------------------------------------------------------

    def _wait_served(self, entries: list[engine.Entry], deadline: float | None) -> None:
        until = time.monotonic() + engine.ESTABLISH_TIMEOUT
        if deadline is not None:
            until = min(until, time.monotonic() + max(0.0, deadline - time.time()))
        for entry in entries:
            while entry.pending_type:
                rt = self.client.resource(entry.group, entry.version, entry.kind)
                if rt is not None:
                    entry.rt, entry.pending_type = rt, False
                    break
                if time.monotonic() > until:
                    raise errors.StatusError(errors.status_failure(
                        504, "Timeout", f"CustomResourceDefinition for {entry.kind}.{entry.group} "
                                        f"not established on the target"))
                time.sleep(0.2)

    def apply(self, entries: list[engine.Entry], *, force_recreate: bool = False,
              progress: Callable[[str], None] | None = None, deadline: float | None = None,
              reapply: bool = False) -> engine.Outcome:
        """Server-side apply on the target in dependency order; raises the first
        ``StatusError``, or ``TimeoutExceeded`` past ``deadline``."""
        outcome = engine.Outcome()
        live = self.live_objects(entries)
        for index, entry in enumerate(entries):
            check_deadline(deadline, "applying", index, len(entries))
            if entry.rank == 2 and index and entries[index - 1].rank < 2:
                self._wait_served(entries, deadline)
            if entry.policy == driftpolicy.IGNORE:
                outcome.unchanged += 1
                continue
            current = None if entry.pending_type else self._current(entry, live)
            if entry.policy == driftpolicy.IF_NOT_PRESENT and current is not None:
                outcome.unchanged += 1
                continue
            config = driftpolicy.with_live_values(entry.obj, current, entry.ignore) if current else entry.obj
            if reapply and engine._in_place(entry, current, config):
                outcome.unchanged += 1
                continue
            before = (current or {}).get("metadata", {}).get("resourceVersion")
            try:
                out = self._apply(entry, config, dry_run=False)
            except errors.StatusError as exc:
                if not (force_recreate and engine._immutable(exc)):
                    raise
                self._delete(entry.rt, entry.namespace, entry.name)
                out = self._apply(entry, entry.obj, dry_run=False)
            if out["metadata"].get("resourceVersion") == before:
                outcome.unchanged += 1
            else:
                outcome.applied += 1
                outcome.changed.append(entry.subject)
            if progress and (index + 1) % 100 == 0:
                progress(f"applied {index + 1}/{len(entries)}")
        self._wait_served(entries, deadline)
        return outcome

    # -- prune ------------------------------------------------------------------------

    def prune(self, old: list[dict], keep_ids: set[str], sync_namespace: str, sync_name: str,
              outcome: engine.Outcome | None = None, deadline: float | None = None,
              skip_forbidden: bool = False) -> engine.Outcome:
        """Delete inventory entries of ``old`` not in ``keep_ids`` that are still
        this Sync's; the target's 403 raises, or with ``skip_forbidden`` leaves
        the object (named in ``outcome.forbidden``)."""
        outcome = outcome or engine.Outcome()
        targets = engine.doomed(old, keep_ids)
        for index, target in enumerate(targets):
            check_deadline(deadline, "pruning", index, len(targets))
            rt = self.client.resource(target.group, target.version, target.kind)
            if rt is None:
                continue  # its type is gone, and so is the object
            try:
                live = self.get(rt, target.namespace, target.name)
                if live is None:
                    continue
                if engine._owner(live) != (sync_namespace, sync_name):
                    continue  # taken over or relabelled: not ours to delete
                if (live["metadata"].get("annotations") or {}).get(PRUNE_ANNOTATION) == "disabled" or \
                        driftpolicy.policy(live) == driftpolicy.IGNORE:
                    outcome.kept += 1
                    continue
                self._delete(rt, target.namespace, target.name)
            except errors.StatusError as exc:
                if exc.code == 404:
                    continue
                if exc.code == 403 and skip_forbidden:
                    outcome.forbidden.append(exc.status.get("message", target.subject))
                    continue
                raise
            outcome.pruned += 1
        return outcome

    # -- health -----------------------------------------------------------------------

    def unhealthy(self, inventory: list[dict]) -> tuple[list[str], list[str]]:
        """(failed, in progress) of the inventory's objects on the target, as
        ``sync.stages.check_health`` words them (one list per type and
        namespace; an object missing there is read alone); an object the
        identity may not read is a failure with the target's 403."""
        entries: list[engine.Entry] = []
        for item in inventory:
            try:
                namespace, name, group, kind, version = engine.parse_id(item)
            except ValueError:
                continue
            entries.append(engine.Entry({}, group, version, kind, namespace, name,
                                        self.client.resource(group, version, kind)))
        live = self.live_objects(entries)
        failed: list[str] = []
        waiting: list[str] = []
        for entry in entries:
            obj = live.get(entry.id)
            if obj is None and entry.rt is not None:
                try:
                    obj = self.get(entry.rt, entry.namespace, entry.name)
                except errors.StatusError as exc:
                    failed.append(exc.status.get("message", "forbidden"))
                    continue
            verdict = health.compute(obj)
            if not verdict.healthy:
                (failed if verdict.status == health.FAILED else waiting).append(
                    health.line(entry.kind, entry.namespace, entry.name, verdict))
        return failed, waiting
