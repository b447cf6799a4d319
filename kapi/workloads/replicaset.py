"""The ReplicaSet controller, also run on ReplicationControllers (as kube's
``pkg/controller/replication`` runs the ReplicaSet controller on them).

``sync`` (kube's ``syncReplicaSet``): claim the active Pods (``ownership``),
create or delete Pods to match ``spec.replicas`` unless the owner is being
deleted (``manage``), then write ``status`` as kube's ``calculateStatus``
does. A failed create or delete sets the ``ReplicaFailure`` condition and is
retried with backoff.
"""

from __future__ import annotations

from kapi.errors import StatusError
from kapi.registry.store import Registry
from kapi.workloads import api, conditions, ownership, pods
from kapi.workloads.api import Object

__all__ = ["BURST", "sync", "sync_rc", "sync_rs"]

#: Pods created or deleted per sync at most (kube's ``BurstReplicas``).
BURST = 500


def sync_rs(namespace: str, name: str, registry: Registry) -> None:
    sync(registry, api.resource("apps", "replicasets"), namespace, name)


def sync_rc(namespace: str, name: str, registry: Registry) -> None:
    sync(registry, api.resource("", "replicationcontrollers"), namespace, name)


def _selector(owner: Object):
    selector = (owner.get("spec") or {}).get("selector")
    if owner["kind"] == "ReplicationController":
        selector = {"matchLabels": selector} if isinstance(selector, dict) else None
    return api.selector_of(selector)


def sync(registry: Registry, rt, namespace: str, name: str) -> None:
    owner = api.get(registry, rt, namespace, name)
    if owner is None:
        return
    selector = _selector(owner)
    if selector is None or selector.empty:
        return
    pod_rt = api.resource("", "pods")
    candidates = api.list_objects(registry, pod_rt, namespace, selector)
    candidates += api.owned(registry, pod_rt, owner["metadata"]["uid"])
    claimed = ownership.claim(
        registry, owner, selector, pod_rt, [p for p in candidates if pods.active(p)]
    )
    error: StatusError | None = None
    if "deletionTimestamp" not in owner["metadata"]:
        try:
            claimed = _manage(registry, owner, claimed)
        except StatusError as exc:
            error = exc
    _write_status(registry, rt, owner, claimed, error)
    if error is not None:
        raise error


def _manage(registry: Registry, owner: Object, claimed: list[Object]) -> list[Object]:
    """Create or delete Pods so that ``spec.replicas`` are active; the Pods now."""
    spec = owner.get("spec") or {}
    want = spec.get("replicas")
    want = 1 if want is None else int(want)
    diff = len(claimed) - want
    pod_rt = api.resource("", "pods")
    namespace = owner["metadata"]["namespace"]
    if diff < 0:
        template = spec.get("template")
        for _ in range(min(-diff, BURST)):
            pod = pods.from_template(template, owner)
            claimed.append(api.create(registry, pod_rt, namespace, pod))
    elif diff > 0:
        doomed = pods.rank_for_deletion(claimed)[: min(diff, BURST)]
        for pod in doomed:
            api.delete(registry, pod_rt, pod)
        gone = {p["metadata"]["uid"] for p in doomed}
        claimed = [p for p in claimed if p["metadata"]["uid"] not in gone]
    return claimed


def calculate_status(owner: Object, claimed: list[Object], error: StatusError | None) -> Object:
    """kube's ``calculateStatus``; zero counts are left out as Go's ``omitempty``."""
    spec = owner.get("spec") or {}
    status = dict(owner.get("status") or {})
    template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    min_ready = int(spec.get("minReadySeconds") or 0)
    fully = sum(
        1
        for p in claimed
        if all((p["metadata"].get("labels") or {}).get(k) == v for k, v in template_labels.items())
    )
    ready = [p for p in claimed if pods.ready(p)]
    available = sum(1 for p in ready if pods.available(p, min_ready))
    conds = status.get("conditions")
    failure = conditions.get(conds, "ReplicaFailure")
    if error is not None and failure is None:
        want = spec.get("replicas")
        want = 1 if want is None else int(want)
        reason = "FailedCreate" if len(claimed) < want else "FailedDelete"
        conds = conditions.set_condition(
            conds,
            {
                "type": "ReplicaFailure",
                "status": "True",
                "lastTransitionTime": api.now(),
                "reason": reason,
                "message": str(error),
            },
        )
    elif error is None and failure is not None:
        conds = conditions.remove(conds, "ReplicaFailure")
    out: Object = {"replicas": len(claimed)}
    for key, value in (
        ("fullyLabeledReplicas", fully),
        ("readyReplicas", len(ready)),
        ("availableReplicas", available),
        ("observedGeneration", owner["metadata"].get("generation")),
    ):
        if value:
            out[key] = value
    if conds:
        out["conditions"] = conds
    return out


def _write_status(registry, rt, owner: Object, claimed: list[Object], error) -> None:
    status = calculate_status(owner, claimed, error)
    if status != (owner.get("status") or {}):
        api.update_status(registry, rt, owner, status)
