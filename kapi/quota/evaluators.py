"""What an object uses, per kind: kube's quota evaluators (``pkg/quota/v1/evaluator/core``
and ``pkg/quota/v1/generic``).

An ``Evaluator`` answers, for its (stored group, resource):

* ``matching_resources(names)``: which quota resource names it counts;
* ``usage(obj)``: what one object uses (``count/...`` always, compute
  resources only for pods that are not done);
* ``matches_scopes(quota, obj)``: whether the object falls in every scope of
  the quota (only pods have scopes; anything else matches an unscoped quota);
* ``constraints(required, obj)``: kube's "must specify" for pods;
* ``handles_update``: whether an update can change usage (services, PVCs).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from fractions import Fraction

from kapi.quota import resources
from kapi.quota.resources import ResourceList

__all__ = ["Evaluator", "evaluator_for", "scope_selectors"]

ONE = Fraction(1)

_POD_COMPUTE = {
    "cpu", "memory", "ephemeral-storage", "pods", "count/pods",
    "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage",
}
#: The names a pod quota makes every container set (kube's validationSet).
_MUST_SPECIFY = {"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"}
_LEGACY = {"configmaps", "secrets", "replicationcontrollers", "resourcequotas"}
_STORAGE_CLASS = ".storageclass.storage.k8s.io/"


def _native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _extended(name: str) -> bool:
    """kube's IsExtendedResourceName."""
    return not _native(name) and not name.startswith("requests.")


class Evaluator:
    """The generic object-count evaluator: ``count/<resource>[.<group>]``."""

    handles_update = False
    has_scopes = False

    def __init__(self, group: str, resource: str) -> None:
        self.group, self.resource = group, resource
        self.count_name = f"count/{resource}.{group}" if group else f"count/{resource}"
        self.names = {self.count_name}
        if not group and resource in _LEGACY:
            self.names.add(resource)

    def matching_resources(self, names) -> list[str]:
        return sorted(n for n in names if n in self.names)

    def usage(self, obj: dict) -> ResourceList:
        return {n: ONE for n in self.names}

    def matches_scopes(self, quota: dict, obj: dict) -> bool:
        return not scope_selectors(quota)

    def constraints(self, required: list[str], obj: dict) -> str | None:
        return None

    def counts(self, obj: dict) -> bool:
        """Whether the object is counted at all (all objects in storage are)."""
        return True


class _Services(Evaluator):
    handles_update = True

    def __init__(self) -> None:
        super().__init__("", "services")
        self.names |= {"services", "services.loadbalancers", "services.nodeports"}

    def usage(self, obj: dict) -> ResourceList:
        spec = obj.get("spec") or {}
        ports = [p for p in spec.get("ports") or [] if isinstance(p, dict)]
        out = {"count/services": ONE, "services": ONE}
        kind = spec.get("type") or "ClusterIP"
        if kind == "NodePort":
            out["services.nodeports"] = Fraction(len(ports))
        elif kind == "LoadBalancer":
            out["services.loadbalancers"] = ONE
            if spec.get("allocateLoadBalancerNodePorts") is False:
                out["services.nodeports"] = Fraction(sum(1 for p in ports if p.get("nodePort")))
            else:
                out["services.nodeports"] = Fraction(len(ports))
        return out


class _Claims(Evaluator):
    handles_update = True

    def __init__(self) -> None:
        super().__init__("", "persistentvolumeclaims")
        self.names |= {"persistentvolumeclaims", "requests.storage"}

    def matching_resources(self, names) -> list[str]:
        return sorted(
            n for n in names
            if n in self.names
            or (_STORAGE_CLASS in n and n.endswith(("/persistentvolumeclaims", "/requests.storage")))
        )

    def usage(self, obj: dict) -> ResourceList:
        spec = obj.get("spec") or {}
        out = {"count/persistentvolumeclaims": ONE, "persistentvolumeclaims": ONE}
        storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
        if storage is not None:
            out["requests.storage"] = resources.parse(storage)
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        klass = spec.get("storageClassName") or annotations.get("volume.beta.kubernetes.io/storage-class")
        if klass:
            out[f"{klass}{_STORAGE_CLASS}persistentvolumeclaims"] = ONE
            if storage is not None:
                out[f"{klass}{_STORAGE_CLASS}requests.storage"] = out["requests.storage"]
        return out


class _Pods(Evaluator):
    has_scopes = True

    def __init__(self) -> None:
        super().__init__("", "pods")
        self.names |= _POD_COMPUTE

    def matching_resources(self, names) -> list[str]:
        return sorted(
            n for n in names
            if n in self.names
            or n.startswith(("requests.hugepages-", "limits.hugepages-"))
            or (n.startswith("requests.") and _extended(n[len("requests."):]))
        )

    def counts(self, obj: dict) -> bool:
        return True

    def usage(self, obj: dict) -> ResourceList:
        out = {"count/pods": ONE}
        if not live(obj):
            return out
        requests, limits = pod_requests(obj), pod_limits(obj)
        return resources.add(out, _compute(requests, limits))

    def matches_scopes(self, quota: dict, obj: dict) -> bool:
        return all(_pod_in_scope(obj, s) for s in scope_selectors(quota))

    def constraints(self, required: list[str], obj: dict) -> str | None:
        wanted = set(required) & _MUST_SPECIFY
        if not wanted:
            return None
        missing: set[str] = set()
        spec = obj.get("spec") or {}
        for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
            res = (c.get("resources") or {}) if isinstance(c, dict) else {}
            requests, limits = _container_lists(res)
            missing |= wanted - set(_compute(requests, limits))
        return f"must specify {','.join(sorted(missing))}" if missing else None


def _container_lists(res: dict) -> tuple[ResourceList, ResourceList]:
    """A container's requests and limits; a limit without a request is also its
    request (kube's defaulting of the pod)."""
    limits = resources.parsed(res.get("limits"))
    requests = {**limits, **resources.parsed(res.get("requests"))}
    return requests, limits


def _compute(requests: ResourceList, limits: ResourceList) -> ResourceList:
    """kube's podComputeUsageHelper."""
    out: ResourceList = {"pods": ONE}
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in requests:
            out[name] = out[f"requests.{name}"] = requests[name]
        if name in limits:
            out[f"limits.{name}"] = limits[name]
    for name, value in requests.items():
        if name.startswith("hugepages-"):
            out[f"requests.{name}"] = value
        elif _extended(name):
            out[f"requests.{name}"] = value
    for name, value in limits.items():
        if name.startswith("hugepages-"):
            out[f"limits.{name}"] = value
    return out


def _pod_lists(obj: dict, which: int) -> ResourceList:
    spec = obj.get("spec") or {}
    total: ResourceList = {}
    for c in spec.get("containers") or []:
        if isinstance(c, dict):
            total = resources.add(total, _container_lists(c.get("resources") or {})[which])
    for c in spec.get("initContainers") or []:
        if isinstance(c, dict):
            for name, value in _container_lists(c.get("resources") or {})[which].items():
                total[name] = max(total.get(name, Fraction(0)), value)
    return resources.add(total, resources.parsed(spec.get("overhead")))


def pod_requests(obj: dict) -> ResourceList:
    return _pod_lists(obj, 0)


def pod_limits(obj: dict) -> ResourceList:
    return _pod_lists(obj, 1)


def _time(text: str) -> datetime | None:
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except (TypeError, ValueError):
        return None


def live(pod: dict) -> bool:
    """kube's QuotaV1Pod: not Succeeded or Failed, nor deleted past its grace."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    meta = pod.get("metadata") or {}
    since = _time(meta.get("deletionTimestamp"))
    grace = meta.get("deletionGracePeriodSeconds")
    if since is not None and isinstance(grace, int):
        return datetime.now(UTC) <= since + timedelta(seconds=grace)
    return True


def _best_effort(pod: dict) -> bool:
    spec = pod.get("spec") or {}
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        res = (c.get("resources") or {}) if isinstance(c, dict) else {}
        for part in ("requests", "limits"):
            values = resources.parsed(res.get(part))
            if any(values.get(n, 0) != 0 for n in ("cpu", "memory")):
                return False
    return True


def scope_selectors(quota: dict) -> list[dict]:
    """kube's getScopeSelectorsFromQuota: each scope as ``Exists``, then the
    scopeSelector's expressions."""
    spec = quota.get("spec") or {}
    out = [{"scopeName": s, "operator": "Exists"} for s in spec.get("scopes") or []]
    out += [e for e in ((spec.get("scopeSelector") or {}).get("matchExpressions") or []) if isinstance(e, dict)]
    return out


def _pod_in_scope(pod: dict, selector: dict) -> bool:
    spec = pod.get("spec") or {}
    scope = selector.get("scopeName")
    if scope == "Terminating":
        deadline = spec.get("activeDeadlineSeconds")
        return isinstance(deadline, int) and deadline >= 0
    if scope == "NotTerminating":
        deadline = spec.get("activeDeadlineSeconds")
        return not (isinstance(deadline, int) and deadline >= 0)
    if scope == "BestEffort":
        return _best_effort(pod)
    if scope == "NotBestEffort":
        return not _best_effort(pod)
    if scope == "PriorityClass":
        name = spec.get("priorityClassName") or ""
        op, values = selector.get("operator"), selector.get("values") or []
        if op == "Exists":
            return bool(name)
        if op == "In":
            return name in values
        if op == "NotIn":
            return name not in values
        return False  # DoesNotExist: the key is always there (kube's podMatchesSelector)
    if scope == "CrossNamespacePodAffinity":
        return _cross_namespace_affinity(spec)
    return False


def _cross_namespace_affinity(spec: dict) -> bool:
    affinity = spec.get("affinity") or {}
    for kind in ("podAffinity", "podAntiAffinity"):
        terms = affinity.get(kind) or {}
        found = list(terms.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        found += [
            (t or {}).get("podAffinityTerm") or {}
            for t in terms.get("preferredDuringSchedulingIgnoredDuringExecution") or []
        ]
        if any(t.get("namespaces") or t.get("namespaceSelector") is not None for t in found if isinstance(t, dict)):
            return True
    return False


_SPECIAL = {("", "pods"): _Pods(), ("", "services"): _Services(), ("", "persistentvolumeclaims"): _Claims()}


def evaluator_for(group: str, resource: str) -> Evaluator:
    """The evaluator of a stored (group, resource)."""
    found = _SPECIAL.get((group, resource))
    return found if found is not None else Evaluator(group, resource)
