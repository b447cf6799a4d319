"""Building objects for the admin tests through the registry."""

from __future__ import annotations

from kapi.registry.catalog import catalog

__all__ = ["configmap", "rt"]


def rt(plural: str, group: str = "", version: str = "v1"):
    return catalog().lookup(group, version, plural)


def configmap(registry, name: str, namespace: str = "default", data=None, labels=None, **meta):
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}, **meta},
        "data": data or {"k": "v"},
    }
    return registry.create(rt("configmaps"), namespace, body)
