"""A quota's usage, counted from the objects of its namespace (kube's
``quota.CalculateUsage`` with the controller's evaluators).

Every resource named in ``spec.hard`` that an evaluator counts gets a value in
``used`` (zero when nothing uses it); names no evaluator knows are left out,
as kube leaves them.
"""

from __future__ import annotations

from fractions import Fraction

from kapi.quota import resources
from kapi.quota.evaluators import Evaluator, evaluator_for
from kapi.quota.resources import ResourceList
from kapi.registry.catalog import catalog
from kapi.storage import ListQuery, default_storage

__all__ = ["calculate", "counted_type"]

_LEGACY = ("configmaps", "secrets", "replicationcontrollers", "resourcequotas")


def counted_type(name: str) -> tuple[str, str, str] | None:
    """(API group, stored group, stored resource) a resource name counts objects of."""
    if name.startswith("count/"):
        resource, _, group = name[len("count/"):].partition(".")
    else:
        kinds = ("persistentvolumeclaims", "services", "pods", *_LEGACY)
        found = [r for r in kinds if evaluator_for("", r).matching_resources([name])]
        if not found:
            return None
        resource, group = found[0], ""
    for rt in catalog().types():
        if rt.group == group and rt.plural == resource and rt.namespaced:
            return group, rt.stored_group, rt.stored_resource
    return None



def calculate(quota: dict) -> ResourceList:
    """The usage of every resource ``quota`` limits that some kind counts."""
    namespace = quota["metadata"]["namespace"]
    hard = resources.parsed((quota.get("spec") or {}).get("hard"))
    types: dict[tuple[str, str, str], list[str]] = {}
    for name in hard:
        found = counted_type(name)
        if found is not None:
            types.setdefault(found, []).append(name)
    used: ResourceList = {}
    storage = default_storage()
    for (group, stored_group, stored_resource), names in types.items():
        evaluator: Evaluator = evaluator_for(group, stored_resource)
        matched = evaluator.matching_resources(names)
        if not matched:
            continue
        total: ResourceList = {n: Fraction(0) for n in matched}
        if evaluator.has_scopes or not _scoped(quota):
            page = storage.list(ListQuery(group=stored_group, resource=stored_resource, namespace=namespace))
            for obj in page.items:
                if evaluator.matches_scopes(quota, obj):
                    total = resources.add(total, resources.mask(evaluator.usage(obj), matched))
        used.update(total)
    return used


def _scoped(quota: dict) -> bool:
    spec = quota.get("spec") or {}
    return bool(spec.get("scopes") or (spec.get("scopeSelector") or {}).get("matchExpressions"))
