"""How a Deployment's ReplicaSets are scaled: rolling updates, recreate,
proportional scaling and history cleanup.

After kube's ``pkg/controller/deployment`` ``rolling.go``, ``recreate.go`` and
``sync.go`` (``scale``, ``cleanupDeployment``). ReplicaSets are dicts as
stored; ``Rollout`` holds the Deployment and the writes (``scale_rs``).
With no Pod ever ready, a rolling update scales the new ReplicaSet up within
``maxSurge`` and scales old ones down only as far as ``maxUnavailable``
allows, exactly as kube's controller does with no kubelet.
"""

from __future__ import annotations

from kapi.workloads import api, revisions
from kapi.workloads.api import Object
from kapi.workloads.revisions import replicas_of

__all__ = ["Rollout", "active", "by_creation", "status_int"]


def status_int(rs: Object | None, key: str) -> int:
    if rs is None:
        return 0
    return int((rs.get("status") or {}).get(key) or 0)


def by_creation(rs: Object):
    meta = rs["metadata"]
    return (meta.get("creationTimestamp") or "", meta["name"])


def active(rss: list[Object | None]) -> list[Object]:
    """``FilterActiveReplicaSets``: those with replicas wanted."""
    return [rs for rs in rss if rs is not None and replicas_of(rs) > 0]


class Rollout:
    """One sync's Deployment ``d`` and its scaling writes."""

    def __init__(self, registry, d: Object) -> None:
        self.registry = registry
        self.d = d
        self.rs_rt = api.resource("apps", "replicasets")

    # -- writes -----------------------------------------------------------------
    def scale_rs(self, rs: Object, size: int) -> tuple[bool, Object]:
        """``scaleReplicaSet``: the size and the replicas annotations."""
        d = self.d
        desired, maximum = replicas_of(d), replicas_of(d) + revisions.max_surge(d)
        annotations = dict(rs["metadata"].get("annotations") or {})
        needs = revisions.set_replicas_annotations(annotations, desired, maximum)
        if replicas_of(rs) == size and not needs:
            return False, rs

        def mutate(current: Object) -> Object:
            current["spec"]["replicas"] = size
            anns = current["metadata"].setdefault("annotations", {})
            revisions.set_replicas_annotations(anns, desired, maximum)
            return current

        scaled = replicas_of(rs) != size
        updated = api.update(self.registry, self.rs_rt, rs, mutate)
        return scaled, updated if updated is not None else rs

    def scale_and_record(self, rs: Object, size: int) -> tuple[bool, Object]:
        if replicas_of(rs) == size:
            return False, rs
        return self.scale_rs(rs, size)

    # -- rolling ------------------------------------------------------------------
    def reconcile_new(self, all_rss: list[Object], new_rs: Object) -> bool:
        d = self.d
        if replicas_of(new_rs) == replicas_of(d):
            return False
        if replicas_of(new_rs) > replicas_of(d):
            return self.scale_and_record(new_rs, replicas_of(d))[0]
        return self.scale_and_record(new_rs, self.new_rs_replicas(all_rss, new_rs))[0]

    def new_rs_replicas(self, all_rss: list[Object], new_rs: Object) -> int:
        """``NewRSNewReplicas``."""
        d = self.d
        if not revisions.rolling(d):
            return replicas_of(d)
        max_total = replicas_of(d) + revisions.max_surge(d)
        current = sum(replicas_of(rs) for rs in all_rss)
        if current >= max_total:
            return replicas_of(new_rs)
        up = min(max_total - current, replicas_of(d) - replicas_of(new_rs))
        return replicas_of(new_rs) + up

    def reconcile_old(self, all_rss: list[Object], old_rss: list[Object], new_rs: Object) -> bool:
        d = self.d
        if sum(replicas_of(rs) for rs in old_rss) == 0:
            return False
        all_count = sum(replicas_of(rs) for rs in all_rss)
        min_available = replicas_of(d) - revisions.max_unavailable(d)
        new_unavailable = replicas_of(new_rs) - status_int(new_rs, "availableReplicas")
        max_scaled_down = all_count - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        old_rss, cleaned = self._cleanup_unhealthy(old_rss, max_scaled_down)
        scaled = self._scale_down_old(old_rss + [new_rs], old_rss)
        return cleaned + scaled > 0

    def _cleanup_unhealthy(self, old_rss: list[Object], limit: int) -> tuple[list[Object], int]:
        old_rss = sorted(old_rss, key=by_creation)
        total = 0
        for i, rs in enumerate(old_rss):
            if total >= limit:
                break
            available = status_int(rs, "availableReplicas")
            if replicas_of(rs) == 0 or replicas_of(rs) == available:
                continue
            count = min(limit - total, replicas_of(rs) - available)
            _, old_rss[i] = self.scale_and_record(rs, replicas_of(rs) - count)
            total += count
        return old_rss, total

    def _scale_down_old(self, all_rss: list[Object], old_rss: list[Object]) -> int:
        d = self.d
        min_available = replicas_of(d) - revisions.max_unavailable(d)
        available = sum(status_int(rs, "availableReplicas") for rs in all_rss)
        if available <= min_available:
            return 0
        want = available - min_available
        total = 0
        for rs in sorted(old_rss, key=by_creation):
            if total >= want:
                break
            if replicas_of(rs) == 0:
                continue
            count = min(replicas_of(rs), want - total)
            self.scale_and_record(rs, replicas_of(rs) - count)
            total += count
        return total

    # -- recreate -----------------------------------------------------------------
    def scale_down_for_recreate(self, old_rss: list[Object]) -> bool:
        scaled = False
        for rs in old_rss:
            if replicas_of(rs) and self.scale_and_record(rs, 0)[0]:
                scaled = True
        return scaled

    # -- scaling events (proportional) ------------------------------------------------
    def scale(self, new_rs: Object | None, old_rss: list[Object]) -> None:
        """``scale``: a change of ``spec.replicas`` spread over the active
        ReplicaSets in proportion to their size."""
        d = self.d
        latest = _active_or_latest(new_rs, old_rss)
        if latest is not None:
            if replicas_of(latest) != replicas_of(d):
                self.scale_and_record(latest, replicas_of(d))
            return
        if _saturated(d, new_rs):
            for rs in active(old_rss):
                self.scale_and_record(rs, 0)
            return
        if not revisions.rolling(d):
            return
        all_rss = active([*old_rss, new_rs])
        allowed = replicas_of(d) + revisions.max_surge(d) if replicas_of(d) > 0 else 0
        to_add = allowed - sum(replicas_of(rs) for rs in all_rss)
        # Larger first; among equals the newer first (up) or the older first (down).
        if to_add > 0:
            all_rss.sort(key=lambda rs: by_creation(rs), reverse=True)
            all_rss.sort(key=replicas_of, reverse=True)
        elif to_add < 0:
            all_rss.sort(key=by_creation)
            all_rss.sort(key=replicas_of, reverse=True)
        added = 0
        sizes = {}
        for rs in all_rss:
            share = self._proportion(rs, to_add, added) if to_add else 0
            sizes[rs["metadata"]["uid"]] = replicas_of(rs) + share
            added += share
        for i, rs in enumerate(all_rss):
            size = sizes[rs["metadata"]["uid"]]
            if i == 0 and to_add:
                size = max(size + to_add - added, 0)
            self.scale_rs(rs, size)

    def _proportion(self, rs: Object, to_add: int, added: int) -> int:
        d = self.d
        if replicas_of(rs) == 0 or to_add == 0 or to_add == added:
            return 0
        if replicas_of(d) == 0:
            fraction = -replicas_of(rs)
        else:
            total = replicas_of(d) + revisions.max_surge(d)
            annotated = (rs["metadata"].get("annotations") or {}).get(revisions.MAX_REPLICAS)
            try:
                base = int(annotated)
            except (TypeError, ValueError):
                base = int((d.get("status") or {}).get("replicas") or 0)
            fraction = (
                _round(replicas_of(rs) * total / base) - replicas_of(rs) if base else 0
            )
        allowed = to_add - added
        return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)

    # -- history ------------------------------------------------------------------
    def cleanup(self, old_rss: list[Object]) -> None:
        """``cleanupDeployment``: old ReplicaSets past ``revisionHistoryLimit``."""
        limit = (self.d.get("spec") or {}).get("revisionHistoryLimit")
        if limit is None or limit >= 2**31 - 1:
            return
        alive = [rs for rs in old_rss if "deletionTimestamp" not in rs["metadata"]]
        diff = len(alive) - int(limit)
        if diff <= 0:
            return
        alive.sort(key=lambda rs: (revisions.revision(rs), by_creation(rs)))
        for rs in alive[:diff]:
            meta = rs["metadata"]
            if (
                status_int(rs, "replicas")
                or replicas_of(rs)
                or int(meta.get("generation") or 0) > status_int(rs, "observedGeneration")
            ):
                continue
            api.delete(self.registry, self.rs_rt, rs)


def _round(value: float) -> int:
    """``integer.RoundToInt32``: half away from zero."""
    return int(value + 0.5) if value >= 0 else -int(-value + 0.5)


def _active_or_latest(new_rs: Object | None, old_rss: list[Object]) -> Object | None:
    if new_rs is None and not old_rss:
        return None
    olds = sorted(old_rss, key=by_creation, reverse=True)
    found = active([*olds, new_rs])
    if not found:
        return new_rs if new_rs is not None else olds[0]
    return found[0] if len(found) == 1 else None


def _saturated(d: Object, rs: Object | None) -> bool:
    if rs is None:
        return False
    desired = (rs["metadata"].get("annotations") or {}).get(revisions.DESIRED_REPLICAS)
    try:
        desired_int = int(desired)
    except (TypeError, ValueError):
        return False
    return (
        replicas_of(rs) == replicas_of(d)
        and desired_int == replicas_of(d)
        and status_int(rs, "availableReplicas") == replicas_of(d)
    )
