"""``kubectl explain`` on the sync kinds describes every field, as Flux's CRDs
do (``sync.descriptions``): the OpenAPI v3 kubectl reads has a description on
every property of GitRepository, Sync, Provider and Alert, and the real
kubectl prints them."""

from __future__ import annotations

import requests

KINDS = {"GitRepository": "gitrepositories", "Sync": "syncs", "Provider": "providers", "Alert": "alerts"}


def _undescribed(schema: dict, path: str, out: list[str]) -> None:
    if not schema.get("description"):
        out.append(path)
    target = schema.get("items") if isinstance(schema.get("items"), dict) else schema
    for name, sub in (target.get("properties") or {}).items():
        _undescribed(sub, f"{path}.{name}", out)


def test_openapi_describes_every_field(kapi_server):
    doc = requests.get(
        kapi_server.url + "/openapi/v3/apis/sync.kapi.dev/v1",
        headers={"Authorization": f"Bearer {kapi_server.token}"},
        verify=str(kapi_server.ca_path),
        timeout=30,
    ).json()
    schemas = doc["components"]["schemas"]
    for kind in KINDS:
        (name,) = [n for n in schemas if n.endswith(f".{kind}")]
        missing: list[str] = []
        _undescribed(schemas[name], kind, missing)
        # metadata is a $ref to ObjectMeta, described where it is referenced.
        assert [m for m in missing if m != f"{kind}.metadata"] == [], kind
        assert "spec" in schemas[name]["properties"]


def test_kubectl_explain_prints_the_descriptions(kapi_server):
    expect = {
        "syncs": ("Sync is the Schema for the syncs API", "SyncSpec defines the configuration"),
        "syncs.spec": ("SyncSpec defines", "Reference of the source where the manifests are"),
        "syncs.spec.driftIgnoreRules.target": ("Target is a selector", "AnnotationSelector is a string"),
        "gitrepositories.spec": ("GitRepositorySpec specifies", "Interval at which the GitRepository URL"),
        "gitrepositories.status.artifact": ("Artifact represents the last successful", "Revision is a human-readable"),
        "providers.spec": ("ProviderSpec defines", "Type specifies which Provider implementation"),
        "alerts.spec.eventSources": ("EventSources specifies how to filter", "Kind of the referent: Sync or"),
    }
    for target, texts in expect.items():
        out = " ".join(kapi_server.kubectl("explain", f"{target}", "--api-version=sync.kapi.dev/v1").stdout.split())
        for text in texts:
            assert text in out, (target, text, out)
