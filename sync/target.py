"""Where a Sync applies: the seam between the sync's stages and a store.

A Sync without ``spec.kubeConfig`` applies to kapi's own store through the
registry (``LocalTarget``: ``sync.apply`` as the Sync's identity, exactly as
before). With one, everything applies to that API server
(``sync.remoteapply.RemoteEngine`` over the shared client of the target,
``sync.remoteclient``). Both offer the same operations: ``plan``,
``authorize``, ``validate``, ``apply``, ``prune``, ``unhealthy``; ``server``
and ``version`` name a remote target (empty for the local one).
"""

from __future__ import annotations

from collections.abc import Callable

from kapi import errors
from kapi.auth import access
from kapi.registry.catalog import catalog
from kapi.registry.store import Registry
from sync import apply as engine
from sync import health
from sync.kubeconfig import KubeconfigError, target_of
from sync.plan import Plan
from sync.remoteapply import RemoteEngine
from sync.remoteclient import client_for

__all__ = ["KubeconfigError", "LocalTarget", "impersonated", "target_for"]


class LocalTarget:
    """kapi's own store, as ``user`` (reads through ``registry``, writes through ``writer``)."""

    server = ""
    version = ""

    def __init__(self, user, registry: Registry, writer: Registry) -> None:
        self.user, self.registry, self.writer = user, registry, writer

    def plan(self, objects: list[dict], sync_namespace: str, sync_name: str, target_namespace: str = "",
             ignore_rules: list[dict] | None = None) -> tuple[list[engine.Entry], list[engine.Problem]]:
        return engine.plan(objects, sync_namespace, sync_name, target_namespace, ignore_rules)

    def authorize(self, entries: list[engine.Entry], doomed: list[engine.Doomed]) -> list[engine.Problem]:
        """RBAC's answer for every object the identity may not apply or prune."""
        return engine.authorize(entries, self.user, self.registry) + engine.authorize_prune(doomed, self.user)

    def validate(self, entries: list[engine.Entry], sync_namespace: str, sync_name: str,
                 deadline: float | None = None, force_recreate: bool = False,
                 plan: Plan | None = None) -> list[engine.Problem]:
        return engine.validate(entries, sync_namespace, sync_name, self.writer, deadline=deadline,
                               force_recreate=force_recreate, plan=plan)

    def apply(self, entries: list[engine.Entry], *, force_recreate: bool = False,
              progress: Callable[[str], None] | None = None, deadline: float | None = None,
              reapply: bool = False) -> engine.Outcome:
        return engine.apply(entries, force_recreate=force_recreate, registry=self.writer, progress=progress,
                            deadline=deadline, reapply=reapply)

    def prune(self, old: list[dict], keep_ids: set[str], sync_namespace: str, sync_name: str,
              outcome: engine.Outcome | None = None, deadline: float | None = None,
              skip_forbidden: bool = False) -> engine.Outcome:
        return engine.prune(old, keep_ids, sync_namespace, sync_name, outcome, self.writer, user=self.user,
                            deadline=deadline, skip_forbidden=skip_forbidden)

    def unhealthy(self, inventory: list[dict]) -> tuple[list[str], list[str]]:
        """(failed, in progress): the inventory objects that are not healthy by
        kstatus rules, each as ``Kind/namespace/name status: 'InProgress':
        message``. The identity must be allowed to get each (kube's 403 text
        otherwise, a failure: the check cannot see the object)."""
        served = catalog(fresh=True)
        entries: list[engine.Entry] = []
        failed: list[str] = []
        waiting: list[str] = []
        for item in inventory:
            try:
                namespace, name, group, kind, version = engine.parse_id(item)
            except ValueError:
                continue
            rt = served.for_kind(group, version, kind)
            if rt is not None:
                try:
                    access.check(self.user, "get", rt, namespace, name)
                except errors.StatusError as exc:
                    failed.append(exc.status.get("message", "forbidden"))
                    continue
            entries.append(engine.Entry({}, group, version, kind, namespace, name, rt))
        live = engine.live_objects(entries, self.registry)
        for entry in entries:
            verdict = health.compute(live.get(entry.id))
            if not verdict.healthy:
                line = health.line(entry.kind, entry.namespace, entry.name, verdict)
                (failed if verdict.status == health.FAILED else waiting).append(line)
        return failed, waiting


def impersonated(namespace: str, spec: dict) -> str:
    """The user a Sync with a kubeconfig impersonates on its target: its
    ``serviceAccountName`` there, or nobody (the kubeconfig's own user)."""
    account = spec.get("serviceAccountName")
    return f"system:serviceaccount:{namespace}:{account}" if account else ""


def target_for(namespace: str, spec: dict, user, registry: Registry, writer: Registry):
    """The target of a Sync of ``namespace`` with ``spec`` acting as ``user``.
    Raises ``KubeconfigError`` for a kubeconfig that cannot be used."""
    target = target_of(namespace, spec, user, registry)
    if target is None:
        return LocalTarget(user, registry, writer)
    return RemoteEngine(client_for(target), impersonated(namespace, spec))
