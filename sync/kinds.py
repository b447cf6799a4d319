"""The ``sync.kapi.dev/v1`` kinds, GitRepository and Sync, as resource types.

They are served by the generic registry like any custom resource: the catalog
asks ``resource_types()`` (``KAPI_RESOURCE_TYPE_PROVIDERS`` in settings) and
this module builds them from built-in CustomResourceDefinition documents, so
schema pruning, defaulting, validation, the ``/status`` subresource, printer
columns and OpenAPI (for kubectl) are the same code as for any CRD.

Shapes follow Flux where Flux has an answer (``sourceRef``, ``dependsOn``,
``interval``, ``ignore``, ``status.inventory.entries``).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from kapi.errors import Cause
from kapi.kinds.custom import CustomResourceStrategy, types_for_crd
from kapi.registry.resource import ResourceType

__all__ = [
    "FINALIZER",
    "GROUP",
    "LABEL_NAME",
    "LABEL_NAMESPACE",
    "PRUNE_ANNOTATION",
    "REQUESTED_AT",
    "VERSION",
    "alert_type",
    "parse_duration",
    "provider_type",
    "repository_type",
    "resource_types",
    "sync_type",
]

GROUP = "sync.kapi.dev"
VERSION = "v1"
FINALIZER = "sync.kapi.dev/finalizer"
LABEL_NAME = "sync.kapi.dev/name"
LABEL_NAMESPACE = "sync.kapi.dev/namespace"
PRUNE_ANNOTATION = "sync.kapi.dev/prune"
REQUESTED_AT = "sync.kapi.dev/requestedAt"

#: Flux's duration pattern (Go's time.ParseDuration units Flux accepts): 30s, 5m,
#: 1h30m, 1.5h, 500ms.
_DURATION_PATTERN = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"
_DURATION = re.compile(_DURATION_PATTERN)
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str | None, default: float) -> float:
    """Seconds in a Go-style duration (``30s``, ``5m``, ``1h30m``, ``500ms``); ``default``
    when empty or malformed (validation refuses malformed ones on write)."""
    if not text or _DURATION.match(text) is None:
        return default
    return sum(float(n) * _UNIT_SECONDS[unit] for n, unit in _DURATION_PART.findall(text))


def _duration(default: str | None = None) -> dict:
    schema: dict[str, Any] = {"type": "string", "pattern": _DURATION_PATTERN}
    if default is not None:
        schema["default"] = default
    return schema


_LOCAL_REF = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string", "minLength": 1}},
}
_CONDITIONS = {
    "type": "array",
    "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
}
_STATUS_BASE = {
    "conditions": _CONDITIONS,
    "observedGeneration": {"type": "integer"},
    "lastHandledReconcileAt": {"type": "string"},
}

_REPOSITORY_SCHEMA = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "default": {},
            "properties": {
                "url": {"type": "string", "pattern": r"^((https?|ssh|file)://.*|[^:/]+@[^:]+:.*)?$"},
                "ref": {
                    "type": "object",
                    "properties": {
                        "branch": {"type": "string"},
                        "tag": {"type": "string"},
                        "commit": {"type": "string", "pattern": "^[0-9a-f]{7,40}$"},
                    },
                },
                "interval": _duration("1m"),
                "timeout": _duration("60s"),
                "secretRef": _LOCAL_REF,
                "webhookSecretRef": _LOCAL_REF,
                "ignore": {"type": "string"},
                "validateOnPush": {"type": "boolean", "default": True},
                "suspend": {"type": "boolean"},
            },
        },
        "status": {
            "type": "object",
            "properties": {
                **_STATUS_BASE,
                "url": {"type": "string"},
                "artifact": {
                    "type": "object",
                    "properties": {
                        "revision": {"type": "string"},
                        "lastUpdateTime": {"type": "string"},
                        "message": {"type": "string"},
                        "author": {"type": "string"},
                    },
                },
            },
        },
    },
}

_SYNC_SCHEMA = {
    "type": "object",
    "properties": {
        "apiVersion": {"type": "string"},
        "kind": {"type": "string"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "required": ["sourceRef"],
            "properties": {
                "sourceRef": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {
                        "kind": {"type": "string", "enum": ["GitRepository"], "default": "GitRepository"},
                        "name": {"type": "string", "minLength": 1},
                        # Accepted only when it is the Sync's own namespace
                        # (cross-namespace references are refused: validate()).
                        "namespace": {"type": "string"},
                    },
                },
                "path": {"type": "string", "default": "./"},
                "interval": _duration("10m"),
                "retryInterval": _duration(),
                # Bounds a whole reconcile (apply and health checks); default:
                # the interval, as Flux's Kustomization.
                "timeout": _duration(),
                "prune": {"type": "boolean", "default": True},
                "suspend": {"type": "boolean", "default": False},
                "force": {"type": "boolean", "default": False},
                "wait": {"type": "boolean", "default": False},
                "targetNamespace": {"type": "string"},
                "serviceAccountName": {"type": "string"},
                # Apply to another API server (sync.kubeconfig), Flux's shape: a
                # Secret of the Sync's namespace holding a kubeconfig under key
                # (default: value or value.yaml).
                "kubeConfig": {
                    "type": "object",
                    "required": ["secretRef"],
                    "properties": {
                        "secretRef": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {"name": {"type": "string", "minLength": 1}, "key": {"type": "string"}},
                        },
                    },
                },
                "dependsOn": {"type": "array", "items": _LOCAL_REF},
                # Fields left to other managers (sync.driftpolicy), Flux's shape.
                "driftIgnoreRules": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["paths"],
                        "properties": {
                            "paths": {"type": "array", "minItems": 1,
                                      "items": {"type": "string", "pattern": "^/"}},
                            "target": {
                                "type": "object",
                                "properties": {k: {"type": "string"} for k in (
                                    "group", "version", "kind", "name", "namespace",
                                    "labelSelector", "annotationSelector")},
                            },
                        },
                    },
                },
                # Variables substituted after rendering (sync.postbuild), Flux's shape.
                "postBuild": {
                    "type": "object",
                    "properties": {
                        "substitute": {"type": "object", "additionalProperties": {"type": "string"}},
                        "substituteFrom": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["kind", "name"],
                                "properties": {
                                    "kind": {"type": "string", "enum": ["ConfigMap", "Secret"]},
                                    "name": {"type": "string", "minLength": 1},
                                    "optional": {"type": "boolean"},
                                },
                            },
                        },
                    },
                },
                # SOPS-encrypted manifests, age keys in a Secret (sync.sops), Flux's shape.
                "decryption": {
                    "type": "object",
                    "required": ["provider"],
                    "properties": {
                        "provider": {"type": "string", "enum": ["sops"]},
                        "secretRef": _LOCAL_REF,
                    },
                },
                # How many revisions status.history keeps (sync.history).
                "historyLimit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 5},
            },
        },
        "status": {
            "type": "object",
            "properties": {
                **_STATUS_BASE,
                "lastAppliedRevision": {"type": "string"},
                "lastAttemptedRevision": {"type": "string"},
                "lastAppliedDigest": {"type": "string"},
                # The API server of spec.kubeConfig and its version (sync.stages.connect).
                "target": {
                    "type": "object",
                    "properties": {"server": {"type": "string"}, "version": {"type": "string"}},
                },
                # spec.wait: when the health checks of the current attempt give up.
                "healthCheckDeadline": {"type": "string"},
                # The commit a destructive prune waits on (sync.pruneguard).
                "pruneHeldRevision": {"type": "string"},
                # Revisions attempted, newest first, and a rollback's pin (sync.history).
                "history": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "revision": {"type": "string"},
                            "digest": {"type": "string"},
                            "firstReconciled": {"type": "string"},
                            "lastReconciled": {"type": "string"},
                            "lastReconciledStatus": {"type": "string"},
                            "totalReconciliations": {"type": "integer"},
                            "applied": {"type": "integer"},
                            "pruned": {"type": "integer"},
                            "changed": {"type": "array", "items": {"type": "string"}},
                        },
                    },
                },
                "pin": {
                    "type": "object",
                    "properties": {"revision": {"type": "string"}, "sourceRevision": {"type": "string"}},
                },
                "applied": {"type": "integer"},
                "unchanged": {"type": "integer"},
                "pruned": {"type": "integer"},
                "inventory": {
                    "type": "object",
                    "properties": {
                        "entries": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {"id": {"type": "string"}, "v": {"type": "string"}},
                            },
                        }
                    },
                },
            },
        },
    },
}

_READY = '.status.conditions[?(@.type=="Ready")].status'
_MESSAGE = '.status.conditions[?(@.type=="Ready")].message'


def _crd(kind: str, plural: str, short: list[str], schema: dict, columns: list[dict]) -> dict:
    from sync.descriptions import described

    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {
                "kind": kind,
                "plural": plural,
                "singular": kind.lower(),
                "listKind": f"{kind}List",
                "shortNames": short,
            },
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": described(kind, schema)},
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": columns,
                }
            ],
        },
        "status": {"conditions": [{"type": "Established", "status": "True"}]},
    }


REPOSITORY_CRD = _crd(
    "GitRepository",
    "gitrepositories",
    ["gitrepo"],
    _REPOSITORY_SCHEMA,
    [
        {"name": "URL", "type": "string", "jsonPath": ".spec.url"},
        {"name": "Ready", "type": "string", "jsonPath": _READY},
        {"name": "Revision", "type": "string", "jsonPath": ".status.artifact.revision"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        {"name": "Status", "type": "string", "jsonPath": _MESSAGE},
    ],
)
SYNC_CRD = _crd(
    "Sync",
    "syncs",
    [],
    _SYNC_SCHEMA,
    [
        {"name": "Ready", "type": "string", "jsonPath": _READY},
        {"name": "Revision", "type": "string", "jsonPath": ".status.lastAppliedRevision"},
        # Where it applies (spec.kubeConfig): the target API server, if not kapi itself.
        {"name": "Target", "type": "string", "jsonPath": ".status.target.server"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        {"name": "Status", "type": "string", "jsonPath": _MESSAGE},
    ],
)


class _SyncKindStrategy(CustomResourceStrategy):
    """A sync kind: the CRD behaviour plus the sync finalizer and duration checks."""

    def prepare_for_create(self, obj: dict) -> None:
        """Prune, default, add the finalizer the workers remove. MUTATES ``obj``."""
        super().prepare_for_create(obj)
        finalizers = obj["metadata"].setdefault("finalizers", [])
        if FINALIZER not in finalizers:
            finalizers.append(FINALIZER)

    def validate(self, obj: dict) -> list[Cause]:
        causes = super().validate(obj)
        spec = obj.get("spec") or {}
        for field in ("interval", "retryInterval", "timeout"):
            value = spec.get(field)
            if isinstance(value, str) and _DURATION.match(value) and parse_duration(value, -1) <= 0:
                causes.append(
                    Cause("FieldValueInvalid", f'Invalid value: "{value}": must be positive', f"spec.{field}")
                )
        ref_ns = (spec.get("sourceRef") or {}).get("namespace") if isinstance(spec.get("sourceRef"), dict) else None
        if ref_ns and ref_ns != obj["metadata"].get("namespace"):
            causes.append(Cause(
                "FieldValueForbidden",
                "Forbidden: cross-namespace references are not allowed: a Sync reads a GitRepository "
                "of its own namespace only",
                "spec.sourceRef.namespace",
            ))
        return causes

    def validate_update(self, obj: dict, old: dict) -> list[Cause]:
        return self.validate(obj)


@functools.lru_cache(maxsize=1)
def resource_types() -> tuple[ResourceType, ...]:
    """GitRepository, Sync, Provider and Alert, ``sync.kapi.dev/v1`` (the
    catalog's provider hook; the notification kinds are ``sync.alertapi``'s)."""
    from sync.alertapi import ALERT_CRD, PROVIDER_CRD

    out: list[ResourceType] = []
    for crd in (REPOSITORY_CRD, SYNC_CRD, PROVIDER_CRD, ALERT_CRD):
        (rt,) = types_for_crd(crd)
        version = crd["spec"]["versions"][0]
        # Only the reconciled kinds carry the finalizer their workers remove.
        strategy = (_SyncKindStrategy(crd, version) if crd in (REPOSITORY_CRD, SYNC_CRD)
                    else CustomResourceStrategy(crd, version))
        extra = {k: v for k, v in rt.extra.items() if k != "crd"}
        out.append(
            ResourceType(**{**{f: getattr(rt, f) for f in rt.__dataclass_fields__}, "strategy": strategy, "extra": extra})
        )
    return tuple(out)


def repository_type() -> ResourceType:
    return resource_types()[0]


def sync_type() -> ResourceType:
    return resource_types()[1]


def provider_type() -> ResourceType:
    return resource_types()[2]


def alert_type() -> ResourceType:
    return resource_types()[3]
