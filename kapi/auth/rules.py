"""PolicyRule matching and coverage (kube's ``rbac/v1`` helpers and
``pkg/registry/rbac/validation`` ``Covers``)."""

from __future__ import annotations

from kapi.auth.attributes import Attributes

__all__ = ["compact_string", "covers", "rule_allows"]


def _has(values: list, wanted: str) -> bool:
    return "*" in values or wanted in values


def _resource_matches(rule_resources: list, resource: str, subresource: str) -> bool:
    combined = f"{resource}/{subresource}" if subresource else resource
    for r in rule_resources:
        if r == "*" or r == combined:
            return True
        if subresource and r == f"*/{subresource}":
            return True
    return False


def _url_matches(rule_urls: list, path: str) -> bool:
    for u in rule_urls:
        if u == "*" or u == path:
            return True
        if u.endswith("*") and path.startswith(u[:-1]):
            return True
    return False


def rule_allows(attrs: Attributes, rule: dict) -> bool:
    """Whether one PolicyRule allows the request."""
    if not _has(rule.get("verbs") or [], attrs.verb):
        return False
    if not attrs.resource_request:
        return _url_matches(rule.get("nonResourceURLs") or [], attrs.path)
    if not _has(rule.get("apiGroups") or [], attrs.api_group):
        return False
    if not _resource_matches(
        rule.get("resources") or [], attrs.resource, attrs.subresource
    ):
        return False
    names = rule.get("resourceNames") or []
    return not names or attrs.name in names


def _breakdown(rule: dict) -> list[dict]:
    """One rule per (group, resource, name, verb) or (url, verb)."""
    out = []
    verbs = rule.get("verbs") or []
    for verb in verbs:
        for group in rule.get("apiGroups") or []:
            for resource in rule.get("resources") or []:
                names = rule.get("resourceNames") or [None]
                for name in names:
                    simple = {
                        "apiGroups": [group],
                        "resources": [resource],
                        "verbs": [verb],
                    }
                    if name is not None:
                        simple["resourceNames"] = [name]
                    out.append(simple)
        for url in rule.get("nonResourceURLs") or []:
            out.append({"nonResourceURLs": [url], "verbs": [verb]})
    return out


def _covers_one(owner: dict, simple: dict) -> bool:
    if not _has(owner.get("verbs") or [], simple["verbs"][0]):
        return False
    if "nonResourceURLs" in simple:
        url = simple["nonResourceURLs"][0]
        owned = owner.get("nonResourceURLs") or []
        if url in owned or "*" in owned:
            return True
        return any(o.endswith("*") and url.startswith(o[:-1]) for o in owned)
    if not _has(owner.get("apiGroups") or [], simple["apiGroups"][0]):
        return False
    resource = simple["resources"][0]
    owned = owner.get("resources") or []
    ok = resource in owned or "*" in owned
    if not ok and "/" in resource:
        ok = f"*/{resource.split('/', 1)[1]}" in owned
    if not ok:
        return False
    owner_names = owner.get("resourceNames") or []
    if not owner_names:
        return True
    return (
        bool(simple.get("resourceNames")) and simple["resourceNames"][0] in owner_names
    )


def covers(owner_rules: list[dict], rules: list[dict]) -> list[dict]:
    """The parts of ``rules`` that ``owner_rules`` do not cover (empty: covered)."""
    missing = []
    for rule in rules:
        for simple in _breakdown(rule):
            if not any(_covers_one(o, simple) for o in owner_rules):
                missing.append(simple)
    return missing


def _go_strings(values: list) -> str:
    return "[" + " ".join('"' + str(v).replace('"', '\\"') + '"' for v in values) + "]"


def compact_string(rules: list[dict]) -> str:
    """kube's ``CompactString`` of rules, verbs merged, one per line."""
    merged: dict[tuple, list[str]] = {}
    for r in rules:
        key = (
            tuple(r.get("apiGroups") or ()),
            tuple(r.get("resources") or ()),
            tuple(r.get("resourceNames") or ()),
            tuple(r.get("nonResourceURLs") or ()),
        )
        verbs = merged.setdefault(key, [])
        verbs.extend(v for v in r.get("verbs") or () if v not in verbs)
    lines = []
    for (groups, resources, names, urls), verbs in merged.items():
        parts = []
        if groups:
            parts.append(f"APIGroups:{_go_strings(list(groups))}")
        if resources:
            parts.append(f"Resources:{_go_strings(list(resources))}")
        if names:
            parts.append(f"ResourceNames:{_go_strings(list(names))}")
        if urls:
            parts.append(f"NonResourceURLs:{_go_strings(list(urls))}")
        parts.append(f"Verbs:{_go_strings(verbs)}")
        lines.append("{" + ", ".join(parts) + "}")
    return "\n".join(lines)
