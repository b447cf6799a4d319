"""The Deployment controller: ReplicaSets per pod template, rollouts, status.

After kube's ``pkg/controller/deployment`` (``syncDeployment``): claim the
ReplicaSets (``ownership``), then, unless the Deployment is being deleted
(status only), paused (scale only) or scaled (``Rollout.scale``), roll out
with its strategy (``Rollout``), clean up the history, and write ``status``
with kube's conditions (``Progressing``, ``Available``). The new ReplicaSet
is ``<deployment>-<pod-template-hash>`` (``revisions``). The revision
annotation is written with the status, as kube's controller does.

A Deployment that has not completed is looked at again when its progress
deadline passes (``requeue_after``), to mark it ``ProgressDeadlineExceeded``.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime

from kapi.errors import StatusError
from kapi.registry.store import Registry
from kapi.workloads import api, conditions, ownership, revisions
from kapi.workloads.api import Object
from kapi.workloads.revisions import HASH_LABEL, replicas_of
from kapi.workloads.rollout import Rollout, active, by_creation, status_int

__all__ = ["sync"]

_NO_DEADLINE = 2**31 - 1


def sync(namespace: str, name: str, registry: Registry) -> float | None:
    rt = api.resource("apps", "deployments")
    stored = api.get(registry, rt, namespace, name)
    if stored is None:
        return None
    d = copy.deepcopy(stored)
    spec = d.get("spec") or {}
    selector = api.selector_of(spec.get("selector"))
    if selector is None:
        return None
    if selector.empty:
        # kube: "This deployment is selecting all pods. A non-empty selector is required."
        status = dict(d.get("status") or {})
        if int(status.get("observedGeneration") or 0) < int(d["metadata"].get("generation") or 0):
            status["observedGeneration"] = d["metadata"]["generation"]
            api.update_status(registry, rt, stored, status)
        return None
    rs_rt = api.resource("apps", "replicasets")
    candidates = api.list_objects(registry, rs_rt, namespace, selector)
    candidates += api.owned(registry, rs_rt, d["metadata"]["uid"])
    rss = ownership.claim(registry, d, selector, rs_rt, candidates)
    sync_ = _Sync(registry, d)
    try:
        return sync_.run(rss)
    finally:
        _save(registry, rt, stored, d)


def _save(registry: Registry, rt, stored: Object, d: Object) -> None:
    """Write what the sync changed, the revision annotation with the status
    (as kube's controller does: a Deployment's status takes annotations)."""
    annotations = d["metadata"].get("annotations") or {}
    if annotations == (stored["metadata"].get("annotations") or {}):
        annotations = None
    if annotations is not None or (d.get("status") or {}) != (stored.get("status") or {}):
        api.update_status(registry, rt, stored, d.get("status") or {}, annotations)


def _has_deadline(d: Object) -> bool:
    value = (d.get("spec") or {}).get("progressDeadlineSeconds")
    return value is not None and value != _NO_DEADLINE


def _condition(type_: str, status: str, reason: str, message: str) -> dict:
    now = api.now()
    return {
        "type": type_,
        "status": status,
        "lastUpdateTime": now,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }


class _Sync:
    def __init__(self, registry: Registry, d: Object) -> None:
        self.registry = registry
        self.d = d
        self.rollout = Rollout(registry, d)

    @property
    def status(self) -> Object:
        return self.d.setdefault("status", {})

    def set_condition(self, cond: dict) -> None:
        self.status["conditions"] = conditions.set_condition(self.status.get("conditions"), cond)

    # -- the flow (syncDeployment) ----------------------------------------------------
    def run(self, rss: list[Object]) -> float | None:
        d = self.d
        spec = d.get("spec") or {}
        if "deletionTimestamp" in d["metadata"]:
            new_rs, old_rss = self.new_and_old(rss, create=False)
            self.sync_status([*old_rss, new_rs], new_rs)
            return None
        self.check_paused()
        if spec.get("paused"):
            return self.sync_scale(rss)
        if self.scaling_event(rss):
            return self.sync_scale(rss)
        if (spec.get("strategy") or {}).get("type") == "Recreate":
            return self.recreate(rss)
        return self.rolling(rss)

    def sync_scale(self, rss: list[Object]) -> float | None:
        """kube's ``sync``: scale, clean up when paused, status."""
        new_rs, old_rss = self.new_and_old(rss, create=False)
        self.rollout.scale(new_rs, old_rss)
        new_rs, old_rss = self._refresh(new_rs, old_rss)
        if (self.d.get("spec") or {}).get("paused"):
            self.rollout.cleanup(old_rss)
        self.sync_status([*old_rss, new_rs], new_rs)
        return None

    def rolling(self, rss: list[Object]) -> float | None:
        new_rs, old_rss = self.new_and_old(rss, create=True)
        all_rss = [*old_rss, new_rs]
        if self.rollout.reconcile_new(all_rss, new_rs):
            return self.rollout_status(*self._refresh(new_rs, old_rss))
        if self.rollout.reconcile_old(all_rss, active(old_rss), new_rs):
            return self.rollout_status(*self._refresh(new_rs, old_rss))
        if self._complete(self.status):
            self.rollout.cleanup(old_rss)
        return self.rollout_status(new_rs, old_rss)

    def recreate(self, rss: list[Object]) -> float | None:
        new_rs, old_rss = self.new_and_old(rss, create=False)
        if self.rollout.scale_down_for_recreate(active(old_rss)):
            return self.rollout_status(*self._refresh(new_rs, old_rss))
        if self._old_pods_running(new_rs, old_rss):
            return self.rollout_status(new_rs, old_rss)
        if new_rs is None:
            new_rs, old_rss = self.new_and_old(rss, create=True)
        self.rollout.scale_and_record(new_rs, replicas_of(self.d))
        new_rs, old_rss = self._refresh(new_rs, old_rss)
        if self._complete(self.status):
            self.rollout.cleanup(old_rss)
        return self.rollout_status(new_rs, old_rss)

    def _refresh(self, new_rs, old_rss):
        """The ReplicaSets as they are after this sync's writes."""
        rs_rt = self.rollout.rs_rt

        def fresh(rs):
            if rs is None:
                return None
            try:
                return self.registry.get(rs_rt, rs["metadata"]["namespace"], rs["metadata"]["name"])
            except StatusError as exc:
                if exc.code == 404:
                    return rs
                raise

        return fresh(new_rs), [fresh(rs) for rs in old_rss]

    def _old_pods_running(self, new_rs, old_rss) -> bool:
        if sum(status_int(rs, "replicas") for rs in old_rss):
            return True
        pod_rt = api.resource("", "pods")
        for rs in old_rss:
            for pod in api.owned(self.registry, pod_rt, rs["metadata"]["uid"]):
                if (pod.get("status") or {}).get("phase") not in ("Failed", "Succeeded"):
                    return True
        return False

    # -- paused, scaling ---------------------------------------------------------------
    def check_paused(self) -> None:
        if not _has_deadline(self.d):
            return
        cond = conditions.get(self.status.get("conditions"), "Progressing")
        if cond is not None and cond.get("reason") == "ProgressDeadlineExceeded":
            return
        paused_exists = cond is not None and cond.get("reason") == "DeploymentPaused"
        paused = bool((self.d.get("spec") or {}).get("paused"))
        if paused and not paused_exists:
            self.set_condition(
                _condition("Progressing", "Unknown", "DeploymentPaused", "Deployment is paused")
            )
        elif not paused and paused_exists:
            self.set_condition(
                _condition("Progressing", "Unknown", "DeploymentResumed", "Deployment is resumed")
            )

    def scaling_event(self, rss: list[Object]) -> bool:
        new_rs, old_rss = self.new_and_old(rss, create=False)
        for rs in active([*old_rss, new_rs]):
            desired = (rs["metadata"].get("annotations") or {}).get(revisions.DESIRED_REPLICAS)
            try:
                if int(desired) != replicas_of(self.d):
                    return True
            except (TypeError, ValueError):
                continue
        return False

    # -- the new ReplicaSet (getNewReplicaSet) ------------------------------------------
    def new_and_old(self, rss: list[Object], create: bool):
        template = (self.d.get("spec") or {}).get("template")
        ordered = sorted(rss, key=by_creation)
        new_rs = next(
            (rs for rs in ordered if revisions.equal_ignore_hash((rs.get("spec") or {}).get("template"), template)),
            None,
        )
        old_rss = [rs for rs in ordered if new_rs is None or rs["metadata"]["uid"] != new_rs["metadata"]["uid"]]
        next_revision = max((revisions.revision(rs) for rs in old_rss), default=0) + 1
        if new_rs is not None:
            new_rs = self._existing_new(new_rs, next_revision)
        elif create:
            new_rs = self._create_new(template, old_rss, next_revision)
        return new_rs, old_rss

    def _set_revision(self, value: str) -> bool:
        annotations = self.d["metadata"].setdefault("annotations", {})
        if annotations.get(revisions.REVISION) != value:
            annotations[revisions.REVISION] = value
            return True
        return False

    def _existing_new(self, rs: Object, next_revision: int) -> Object:
        d = self.d
        copy_ = copy.deepcopy(rs)
        changed = revisions.new_rs_annotations(d, copy_, next_revision, exists=True)
        min_ready = int((d.get("spec") or {}).get("minReadySeconds") or 0)
        if changed or int((rs.get("spec") or {}).get("minReadySeconds") or 0) != min_ready:
            annotations = copy_["metadata"]["annotations"]

            def mutate(current: Object) -> Object:
                current["metadata"]["annotations"] = annotations
                current["spec"]["minReadySeconds"] = min_ready
                return current

            return api.update(self.registry, self.rollout.rs_rt, rs, mutate) or rs
        self._set_revision((copy_["metadata"].get("annotations") or {}).get(revisions.REVISION, ""))
        if _has_deadline(d) and conditions.get(self.status.get("conditions"), "Progressing") is None:
            self.set_condition(
                _condition(
                    "Progressing", "True", "FoundNewReplicaSet", f'Found new replica set "{rs["metadata"]["name"]}"'
                )
            )
        return rs

    def _create_new(self, template, old_rss: list[Object], next_revision: int) -> Object:
        d = self.d
        spec = d.get("spec") or {}
        template = copy.deepcopy(template) if isinstance(template, dict) else {}
        collisions = self.status.get("collisionCount")
        pod_hash = revisions.template_hash(template, collisions)
        tmeta = template.setdefault("metadata", {})
        tmeta["labels"] = {**(tmeta.get("labels") or {}), HASH_LABEL: pod_hash}
        selector = copy.deepcopy(spec.get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: pod_hash}
        rs: Object = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{d['metadata']['name']}-{pod_hash}",
                "ownerReferences": [ownership.controller_ref(d)],
                "labels": dict(tmeta["labels"]),
            },
            "spec": {
                "replicas": 0,
                "minReadySeconds": int(spec.get("minReadySeconds") or 0),
                "selector": selector,
                "template": template,
            },
        }
        rs["spec"]["replicas"] = self.rollout.new_rs_replicas([*old_rss, rs], rs)
        revisions.new_rs_annotations(d, rs, next_revision, exists=False)
        namespace = d["metadata"]["namespace"]
        try:
            created = api.create(self.registry, self.rollout.rs_rt, namespace, rs)
        except StatusError as exc:
            if exc.code == 409 and exc.reason == "AlreadyExists":
                found = self.registry.get(self.rollout.rs_rt, namespace, rs["metadata"]["name"])
                ref = ownership.controller_of(found["metadata"])
                if ref and ref.get("uid") == d["metadata"]["uid"] and revisions.equal_ignore_hash(
                    (found.get("spec") or {}).get("template"), spec.get("template")
                ):
                    return found
                self.status["collisionCount"] = int(collisions or 0) + 1
            elif _has_deadline(d) and "is being terminated" not in str(exc):
                self.set_condition(
                    _condition(
                        "Progressing",
                        "False",
                        "ReplicaSetCreateError",
                        f'Failed to create new replica set "{rs["metadata"]["name"]}": {exc}',
                    )
                )
            raise
        self._set_revision(str(next_revision))
        if _has_deadline(d):
            self.set_condition(
                _condition(
                    "Progressing", "True", "NewReplicaSetCreated", f'Created new replica set "{created["metadata"]["name"]}"'
                )
            )
        return created

    # -- status -----------------------------------------------------------------------
    def calculate_status(self, all_rss: list[Object | None]) -> Object:
        d = self.d
        rss = [rs for rs in all_rss if rs is not None]
        new_rs = all_rss[-1] if all_rss else None
        available = sum(status_int(rs, "availableReplicas") for rs in rss)
        total = sum(replicas_of(rs) for rs in rss)
        old = d.get("status") or {}
        status: Object = {}
        for key, value in (
            ("observedGeneration", d["metadata"].get("generation")),
            ("replicas", sum(status_int(rs, "replicas") for rs in rss)),
            ("updatedReplicas", status_int(new_rs, "replicas")),
            ("readyReplicas", sum(status_int(rs, "readyReplicas") for rs in rss)),
            ("availableReplicas", available),
            ("unavailableReplicas", max(total - available, 0)),
        ):
            if value:
                status[key] = value
        conds = list(old.get("conditions") or ())
        if available >= replicas_of(d) - revisions.max_unavailable(d):
            cond = _condition("Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.")
        else:
            cond = _condition(
                "Available", "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability."
            )
        conds = conditions.set_condition(conds, cond)
        if conds:
            status["conditions"] = conds
        if old.get("collisionCount") is not None:
            status["collisionCount"] = old["collisionCount"]
        return status

    def sync_status(self, all_rss: list[Object | None], new_rs) -> None:
        self.d["status"] = self.calculate_status(all_rss)

    def _complete(self, status: Object) -> bool:
        want = replicas_of(self.d)
        return (
            int(status.get("updatedReplicas") or 0) == want
            and int(status.get("replicas") or 0) == want
            and int(status.get("availableReplicas") or 0) == want
            and int(status.get("observedGeneration") or 0) >= int(self.d["metadata"].get("generation") or 0)
        )

    def rollout_status(self, new_rs, old_rss) -> float | None:
        """``syncRolloutStatus``; returns when to look again for the deadline."""
        d = self.d
        old = copy.deepcopy(d.get("status") or {})
        status = self.calculate_status([*old_rss, new_rs])
        conds = status.get("conditions")
        if not _has_deadline(d):
            conds = conditions.remove(conds, "Progressing")
        current = conditions.get(old.get("conditions"), "Progressing")
        complete_before = (
            status.get("replicas", 0) == status.get("updatedReplicas", 0)
            and current is not None
            and current.get("reason") == "NewReplicaSetAvailable"
        )
        what = f'ReplicaSet "{new_rs["metadata"]["name"]}"' if new_rs else f'Deployment "{d["metadata"]["name"]}"'
        if _has_deadline(d) and not complete_before:
            if self._complete(status):
                conds = conditions.set_condition(
                    conds,
                    _condition("Progressing", "True", "NewReplicaSetAvailable", f"{what} has successfully progressed."),
                )
            elif _progressing(old, status):
                cond = _condition("Progressing", "True", "ReplicaSetUpdated", f"{what} is progressing.")
                if current is not None:
                    if current.get("status") == "True" and "lastTransitionTime" in current:
                        cond["lastTransitionTime"] = current["lastTransitionTime"]
                    conds = conditions.remove(conds, "Progressing")
                conds = conditions.set_condition(conds, cond)
            elif self._timed_out(conds):
                conds = conditions.set_condition(
                    conds,
                    _condition("Progressing", "False", "ProgressDeadlineExceeded", f"{what} has timed out progressing."),
                )
        failures = [
            c
            for rs in ([new_rs] if new_rs is not None and _failures(new_rs) else [*old_rss, new_rs])
            for c in _failures(rs)
        ]
        if failures:
            conds = conditions.set_condition(conds, failures[0])
        else:
            conds = conditions.remove(conds, "ReplicaFailure")
        if conds:
            status["conditions"] = conds
        else:
            status.pop("conditions", None)
        d["status"] = status
        return self._requeue_stuck(status)

    def _timed_out(self, conds) -> bool:
        cond = conditions.get(conds, "Progressing")
        if cond is None or cond.get("reason") == "NewReplicaSetAvailable":
            return False
        if cond.get("reason") == "ProgressDeadlineExceeded":
            return True
        since = api.parse_time(cond.get("lastUpdateTime"))
        deadline = int((self.d.get("spec") or {}).get("progressDeadlineSeconds") or 0)
        return since is not None and since.timestamp() + deadline < datetime.now(UTC).timestamp()

    def _requeue_stuck(self, status: Object) -> float | None:
        cond = conditions.get(status.get("conditions"), "Progressing")
        if not _has_deadline(self.d) or cond is None:
            return None
        if self._complete(status) or cond.get("reason") == "ProgressDeadlineExceeded":
            return None
        since = api.parse_time(cond.get("lastUpdateTime"))
        if since is None:
            return None
        deadline = int((self.d.get("spec") or {}).get("progressDeadlineSeconds") or 0)
        after = since.timestamp() + deadline - datetime.now(UTC).timestamp()
        return max(after, 0.0) + 1.0


def _progressing(old: Object, new: Object) -> bool:
    """``DeploymentProgressing``: more updated, fewer old, more ready or available."""

    def n(status, key):
        return int(status.get(key) or 0)

    return (
        n(new, "updatedReplicas") > n(old, "updatedReplicas")
        or n(new, "replicas") - n(new, "updatedReplicas") < n(old, "replicas") - n(old, "updatedReplicas")
        or n(new, "readyReplicas") > n(old, "readyReplicas")
        or n(new, "availableReplicas") > n(old, "availableReplicas")
    )


def _failures(rs: Object | None) -> list[dict]:
    if rs is None:
        return []
    out = []
    for c in (rs.get("status") or {}).get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == "ReplicaFailure":
            out.append(
                {
                    "type": "ReplicaFailure",
                    "status": c.get("status"),
                    "lastUpdateTime": c.get("lastTransitionTime"),
                    "lastTransitionTime": c.get("lastTransitionTime"),
                    "reason": c.get("reason"),
                    "message": c.get("message"),
                }
            )
    return out
