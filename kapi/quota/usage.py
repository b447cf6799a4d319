"""What one object costs against a quota, after kube's quota evaluators
(``pkg/quota/v1/evaluator/core``, ``generic``).

Every object counts ``count/<resource>.<group>`` (``count/<resource>`` in the
core group); the core kinds also count under their legacy names (``pods``,
``services``, ``configmaps``...). A Pod that is not terminal adds its requests
and limits (``requests.cpu`` and ``cpu``, ``limits.memory``...; extended
resources as ``requests.<name>``), the larger of its containers' sum and any
init container's, plus its overhead. A Service adds ``services.loadbalancers``
and ``services.nodeports``; a claim ``requests.storage`` and the same per
storage class. Quantities are ``Fraction``s.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime
from fractions import Fraction
from typing import Any

from kapi import quantity as quantities

__all__ = [
    "GROWS_ON_UPDATE",
    "Usage",
    "format_list",
    "matches_scopes",
    "missing",
    "parse_list",
    "tracks",
    "usage",
]

Usage = dict[str, Fraction]

#: Legacy object-count names of core kinds (kube's ``ResourcePods``...).
LEGACY_COUNTS = {
    "pods": "pods",
    "services": "services",
    "configmaps": "configmaps",
    "secrets": "secrets",
    "replicationcontrollers": "replicationcontrollers",
    "resourcequotas": "resourcequotas",
    "persistentvolumeclaims": "persistentvolumeclaims",
}
#: Kinds whose cost an update can raise; any other kind costs only its
#: count, which a create adds and no update changes.
GROWS_ON_UPDATE = frozenset({("", "pods"), ("", "services"), ("", "persistentvolumeclaims")})
#: Compute resources whose requests count under their bare name too.
_BARE = ("cpu", "memory", "ephemeral-storage")
_NATIVE_PREFIX = ("kubernetes.io/", "requests.", "limits.")
#: What a quota with pod scopes tracks (kube's podComputeAndObjectResources).
_POD_SCOPED = frozenset({
    "pods", "cpu", "memory", "ephemeral-storage",
    "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "count/pods",
})
_POD_SCOPES = frozenset({"Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass",
                         "CrossNamespacePodAffinity"})


def count_name(group: str, resource: str) -> str:
    return f"count/{resource}.{group}" if group else f"count/{resource}"


def parse_list(values: Any) -> Usage:
    """A ``ResourceList`` as quantities (a value that is no quantity is left out)."""
    out: Usage = {}
    for name, value in (values or {}).items() if isinstance(values, dict) else ():
        try:
            out[str(name)] = quantities.parse(str(value))
        except quantities.QuantityError:
            continue
    return out


def format_list(values: Usage) -> dict[str, str]:
    return {name: quantities.canonical(value) for name, value in sorted(values.items())}


def usage(group: str, resource: str, obj: dict | None) -> Usage:
    """What ``obj`` (stored group and resource) costs; {} for None or a Pod
    that no longer counts."""
    if obj is None:
        return {}
    if group == "" and resource == "pods" and not _pod_counts(obj):
        return {}
    used: Usage = {count_name(group, resource): Fraction(1)}
    if group == "" and resource in LEGACY_COUNTS:
        used[LEGACY_COUNTS[resource]] = Fraction(1)
    if group == "" and resource == "pods":
        used.update(_pod_resources(obj))
    elif group == "" and resource == "services":
        used.update(_service_resources(obj))
    elif group == "" and resource == "persistentvolumeclaims":
        used.update(_claim_resources(obj))
    return used


def _pod_counts(pod: dict) -> bool:
    """kube's QuotaV1Pod: terminal Pods, and Pods past their deletion grace, do not count."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    meta = pod.get("metadata") or {}
    when, grace = meta.get("deletionTimestamp"), meta.get("deletionGracePeriodSeconds")
    if when and grace is not None:
        try:
            deadline = datetime.strptime(when, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp() + grace
        except ValueError:
            return True
        return datetime.now(UTC).timestamp() <= deadline
    return True


def _container_lists(pod: dict, kind: str) -> tuple[list[Usage], list[Usage]]:
    spec = pod.get("spec") or {}

    def lists(key: str) -> list[Usage]:
        return [
            parse_list((c.get("resources") or {}).get(kind))
            for c in spec.get(key) or ()
            if isinstance(c, dict)
        ]

    return lists("containers"), lists("initContainers")


def _pod_totals(pod: dict, kind: str) -> Usage:
    containers, inits = _container_lists(pod, kind)
    total: Usage = defaultdict(Fraction)
    for each in containers:
        for name, value in each.items():
            total[name] += value
    for each in inits:
        for name, value in each.items():
            total[name] = max(total[name], value)
    for name, value in parse_list((pod.get("spec") or {}).get("overhead")).items():
        if name in total:
            total[name] += value
    return dict(total)


def _pod_resources(pod: dict) -> Usage:
    used: Usage = {}
    for name, value in _pod_totals(pod, "requests").items():
        if name in _BARE:
            used[name] = value
            used[f"requests.{name}"] = value
        elif not name.startswith(_NATIVE_PREFIX) and "/" in name or name.startswith("hugepages-"):
            used[f"requests.{name}"] = value
    for name, value in _pod_totals(pod, "limits").items():
        if name in _BARE:
            used[f"limits.{name}"] = value
    return used


#: What a quota naming the key requires every container of a Pod to set.
_REQUIRED = {
    "cpu": ("requests", "cpu"), "requests.cpu": ("requests", "cpu"),
    "memory": ("requests", "memory"), "requests.memory": ("requests", "memory"),
    "limits.cpu": ("limits", "cpu"), "limits.memory": ("limits", "memory"),
}


def missing(pod: dict, names) -> list[str]:
    """The quota resources among ``names`` that some container of ``pod`` does
    not set (kube's pod evaluator constraints: a quota on ``limits.cpu``
    needs every container's cpu limit)."""
    out = set()
    for container in (pod.get("spec") or {}).get("containers") or ():
        resources = container.get("resources") or {} if isinstance(container, dict) else {}
        for name in names:
            kind, resource = _REQUIRED.get(name, (None, None))
            if kind and resource not in (resources.get(kind) or {}):
                # A limit stands in for a missing request (kube defaults one from the other).
                if kind == "requests" and resource in (resources.get("limits") or {}):
                    continue
                out.add(name)
    return sorted(out)


def best_effort(pod: dict) -> bool:
    """kube's QoS BestEffort: no container or init container asks for or caps cpu or memory."""
    for kind in ("requests", "limits"):
        containers, inits = _container_lists(pod, kind)
        if any(name in ("cpu", "memory") for each in containers + inits for name in each):
            return False
    return True


def _service_resources(svc: dict) -> Usage:
    spec = svc.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    ports = len([p for p in spec.get("ports") or () if isinstance(p, dict)])
    used: Usage = {"services.loadbalancers": Fraction(kind == "LoadBalancer")}
    if kind == "NodePort":
        used["services.nodeports"] = Fraction(ports)
    elif kind == "LoadBalancer":
        allocate = spec.get("allocateLoadBalancerNodePorts", True) is not False
        used["services.nodeports"] = Fraction(ports if allocate else 0)
    else:
        used["services.nodeports"] = Fraction(0)
    return used


def _claim_resources(claim: dict) -> Usage:
    spec = claim.get("spec") or {}
    storage = parse_list((spec.get("resources") or {}).get("requests")).get("storage")
    used: Usage = {}
    cls = spec.get("storageClassName") or ""
    if cls:
        used[f"{cls}.storageclass.storage.k8s.io/persistentvolumeclaims"] = Fraction(1)
    if storage is not None:
        used["requests.storage"] = storage
        if cls:
            used[f"{cls}.storageclass.storage.k8s.io/requests.storage"] = storage
    return used


def _scope_terms(quota: dict) -> list[tuple[str, str, list[str]]]:
    spec = quota.get("spec") or {}
    terms = [(str(s), "Exists", []) for s in spec.get("scopes") or ()]
    for expr in ((spec.get("scopeSelector") or {}).get("matchExpressions") or ()):
        if isinstance(expr, dict):
            terms.append((str(expr.get("scopeName")), str(expr.get("operator")), list(expr.get("values") or ())))
    return terms


def matches_scopes(quota: dict, group: str, resource: str, obj: dict) -> bool:
    """Whether ``quota``'s scopes select ``obj`` (only Pods have scopes)."""
    terms = _scope_terms(quota)
    if not terms:
        return True
    if (group, resource) != ("", "pods"):
        return False
    spec = obj.get("spec") or {}
    for scope, operator, values in terms:
        if scope == "Terminating":
            ok = isinstance(spec.get("activeDeadlineSeconds"), int) and spec["activeDeadlineSeconds"] >= 0
        elif scope == "NotTerminating":
            ok = not (isinstance(spec.get("activeDeadlineSeconds"), int) and spec["activeDeadlineSeconds"] >= 0)
        elif scope == "BestEffort":
            ok = best_effort(obj)
        elif scope == "NotBestEffort":
            ok = not best_effort(obj)
        elif scope == "PriorityClass":
            ok = _priority_matches(spec.get("priorityClassName") or "", operator, values)
        elif scope == "CrossNamespacePodAffinity":
            ok = False
        else:
            ok = False
        if operator == "DoesNotExist" and scope != "PriorityClass":
            ok = not ok
        if not ok:
            return False
    return True


def _priority_matches(name: str, operator: str, values: list[str]) -> bool:
    if operator == "In":
        return name in values
    if operator == "NotIn":
        return name not in values
    if operator == "Exists":
        return bool(name)
    if operator == "DoesNotExist":
        return not name
    return False


def tracks(quota: dict, name: str) -> bool:
    """Whether ``quota`` tracks resource ``name``: any it names, but a quota
    with Pod scopes only Pods' count and compute (BestEffort: the count)."""
    scopes = {scope for scope, _, _ in _scope_terms(quota)}
    if not scopes & _POD_SCOPES:
        return True
    if "BestEffort" in scopes:
        return name in ("pods", "count/pods")
    return name in _POD_SCOPED or name.startswith("requests.")
