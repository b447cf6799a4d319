"""A one-version CustomResourceDefinition around a schema, and a module fixture's
worth of setup: the CRD served in a fresh namespace, both removed afterwards."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def crd_manifest(group: str, plural: str, kind: str, schema: dict) -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "kind": kind},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }


def served_collection(api, prefix: str, plural: str, kind: str, schema: dict) -> Iterator[str]:
    """Create the CRD (group ``<prefix><random>.example.com``) and a namespace;
    yield the custom resources' collection URL there; then delete both."""
    group = f"{prefix}{uuid.uuid4().hex[:8]}.example.com"
    created = api.post(CRD_PATH, crd_manifest(group, plural, kind, schema))
    assert created.status_code == 201, created.text
    namespace = f"t-{uuid.uuid4().hex[:10]}"
    assert api.post("/api/v1/namespaces", {"metadata": {"name": namespace}}).ok
    yield f"/apis/{group}/v1/namespaces/{namespace}/{plural}"
    api.delete(f"/api/v1/namespaces/{namespace}")
    api.delete(f"{CRD_PATH}/{plural}.{group}")
