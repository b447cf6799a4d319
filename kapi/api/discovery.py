"""Discovery documents: legacy (/api, /apis, APIResourceList) and aggregated (v2).

All are computed from the catalog, so custom resources appear as soon as the
catalog has them.
"""

from __future__ import annotations

from kapi.registry.catalog import Catalog
from kapi.registry.resource import ResourceType

__all__ = [
    "AGGREGATED_TRANSFORMS",
    "aggregated_discovery",
    "api_group",
    "api_group_list",
    "api_resource_list",
    "api_versions",
]

AGGREGATED_TRANSFORMS = (
    ("APIGroupDiscoveryList", "apidiscovery.k8s.io", "v2"),
    ("APIGroupDiscoveryList", "apidiscovery.k8s.io", "v2beta1"),
)


def api_versions(server_address: str) -> dict:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _group_entry(group: str, versions: list[str]) -> dict:
    gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {"name": group, "versions": gvs, "preferredVersion": gvs[0]}


def api_group_list(catalog: Catalog) -> dict:
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_group_entry(g, v) for g, v in catalog.groups() if g],
    }


def api_group(catalog: Catalog, group: str) -> dict | None:
    for g, versions in catalog.groups():
        if g == group and g:
            return {"kind": "APIGroup", "apiVersion": "v1", **_group_entry(g, versions)}
    return None


def _resource_entries(rt: ResourceType) -> list[dict]:
    entry: dict = {
        "name": rt.plural,
        "singularName": rt.singular,
        "namespaced": rt.namespaced,
        "kind": rt.kind,
        "verbs": sorted(rt.verbs),
    }
    if rt.short_names:
        entry["shortNames"] = list(rt.short_names)
    if rt.categories:
        entry["categories"] = list(rt.categories)
    out = [entry]
    for sub in rt.subresources:
        sub_entry = {
            "name": f"{rt.plural}/{sub.name}",
            "singularName": "",
            "namespaced": rt.namespaced,
            "kind": sub.kind,
            "verbs": sorted(sub.verbs),
        }
        if sub.group is not None:
            sub_entry["group"] = sub.group
            sub_entry["version"] = sub.version
        out.append(sub_entry)
    return out


def api_resource_list(catalog: Catalog, group: str, version: str) -> dict | None:
    if not catalog.has_group_version(group, version):
        return None
    resources = []
    for rt in catalog.resources(group, version):
        resources.extend(_resource_entries(rt))
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": resources,
    }


def _aggregated_resource(rt: ResourceType) -> dict:
    entry: dict = {
        "resource": rt.plural,
        "responseKind": {"group": rt.group, "version": rt.version, "kind": rt.kind},
        "scope": "Namespaced" if rt.namespaced else "Cluster",
        "singularResource": rt.singular,
        "verbs": sorted(rt.verbs),
    }
    if rt.short_names:
        entry["shortNames"] = list(rt.short_names)
    if rt.categories:
        entry["categories"] = list(rt.categories)
    if rt.subresources:
        entry["subresources"] = [
            {
                "subresource": sub.name,
                "responseKind": {
                    "group": sub.group if sub.group is not None else rt.group,
                    "version": sub.version or rt.version,
                    "kind": sub.kind,
                },
                "verbs": sorted(sub.verbs),
            }
            for sub in rt.subresources
        ]
    return entry


def aggregated_discovery(catalog: Catalog, legacy: bool, version: str = "v2") -> dict:
    """``APIGroupDiscoveryList`` for /api (legacy=True: the core group) or /apis."""
    items = []
    for group, versions in catalog.groups():
        if bool(group) == legacy:
            continue
        items.append(
            {
                "metadata": {"name": group, "creationTimestamp": None},
                "versions": [
                    {
                        "version": v,
                        "resources": [_aggregated_resource(rt) for rt in catalog.resources(group, v)],
                        "freshness": "Current",
                    }
                    for v in versions
                ],
            }
        )
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": f"apidiscovery.k8s.io/{version}",
        "metadata": {},
        "items": items,
    }
