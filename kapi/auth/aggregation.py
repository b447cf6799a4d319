"""ClusterRole aggregation (kube's ``ClusterRoleAggregationController`` logic).

A ClusterRole with an ``aggregationRule`` has as ``.rules`` the union of the
``.rules`` of every other ClusterRole its selectors match, in name order, each
rule once. kube's controller writes that union into the object and the
authorizer reads ``.rules``; chains (``admin`` takes in ``edit``, which takes in
``view``) converge as each written role triggers its aggregators again.
``converged`` runs those passes in memory (for the bootstrap policy, which
writes its roles already converged so that no window exists at startup).
"""

from __future__ import annotations

from kapi.selectors import label_selector_matches

__all__ = ["FIELD_MANAGER", "aggregated_rules", "aggregates", "converged"]

# kube's controller applies under this field manager.
FIELD_MANAGER = "clusterrole-aggregation-controller"


def aggregates(role: dict) -> bool:
    return bool((role.get("aggregationRule") or {}).get("clusterRoleSelectors"))


def aggregated_rules(name: str, cluster_roles: dict[str, dict]) -> list[dict]:
    """The rules ``cluster_roles[name]`` should hold: the union of the stored
    rules of the other ClusterRoles any of its selectors match."""
    selectors = (cluster_roles[name].get("aggregationRule") or {}).get(
        "clusterRoleSelectors"
    ) or []
    selected = set()
    for other_name, other in cluster_roles.items():
        if other_name == name:
            continue
        labels = (other.get("metadata") or {}).get("labels") or {}
        if any(label_selector_matches(s, labels) for s in selectors):
            selected.add(other_name)
    rules: list[dict] = []
    for other_name in sorted(selected):
        for rule in cluster_roles[other_name].get("rules") or []:
            if rule not in rules:
                rules.append(rule)
    return rules


def converged(cluster_roles: dict[str, dict], max_passes: int = 10) -> dict[str, dict]:
    """A copy of ``cluster_roles`` whose aggregating roles hold their aggregated
    rules, after as many passes as chains need (cycles stop at ``max_passes``)."""
    roles = {name: dict(role) for name, role in cluster_roles.items()}
    for _ in range(max_passes):
        changed = False
        for name in sorted(roles):
            if not aggregates(roles[name]):
                continue
            rules = aggregated_rules(name, roles)
            if rules != (roles[name].get("rules") or []):
                roles[name]["rules"] = rules
                changed = True
        if not changed:
            break
    return roles
