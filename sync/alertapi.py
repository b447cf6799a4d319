"""The notification kinds of ``sync.kapi.dev/v1``, Provider and Alert, in the
shape of Flux's notification-controller (``notification.toolkit.fluxcd.io``):

* a **Provider** says where to post: ``spec.type`` (``generic`` JSON or
  ``slack``-compatible), the URL in the ``address`` key of the Secret
  ``spec.secretRef`` (never in the spec, as Flux recommends), optional
  ``channel`` and ``username`` for Slack, ``suspend``;
* an **Alert** says what: ``spec.providerRef``, ``spec.eventSeverity``
  (``info``: failures and recoveries; ``error``: failures only),
  ``spec.eventSources`` (``kind`` Sync or GitRepository, ``name`` or ``*``)
  of its own namespace, ``suspend``.

Delivery is ``sync.notify``.
"""

from __future__ import annotations

__all__ = ["ALERT_CRD", "PROVIDER_CRD"]


def _crds() -> tuple[dict, dict]:
    from sync.kinds import _LOCAL_REF, _crd

    provider_schema = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "required": ["type", "secretRef"],
                "properties": {
                    "type": {"type": "string", "enum": ["generic", "slack"]},
                    "secretRef": _LOCAL_REF,
                    "channel": {"type": "string"},
                    "username": {"type": "string"},
                    "suspend": {"type": "boolean"},
                },
            },
        },
    }
    alert_schema = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "required": ["providerRef", "eventSources"],
                "properties": {
                    "providerRef": _LOCAL_REF,
                    "eventSeverity": {"type": "string", "enum": ["info", "error"], "default": "info"},
                    "eventSources": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "required": ["kind"],
                            "properties": {
                                "kind": {"type": "string", "enum": ["Sync", "GitRepository"]},
                                "name": {"type": "string", "default": "*"},
                            },
                        },
                    },
                    "suspend": {"type": "boolean"},
                },
            },
        },
    }
    age = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
    provider = _crd("Provider", "providers", [], provider_schema,
                    [{"name": "Type", "type": "string", "jsonPath": ".spec.type"}, age])
    alert = _crd("Alert", "alerts", [], alert_schema,
                 [{"name": "Provider", "type": "string", "jsonPath": ".spec.providerRef.name"},
                  {"name": "Severity", "type": "string", "jsonPath": ".spec.eventSeverity"}, age])
    return provider, alert


PROVIDER_CRD, ALERT_CRD = _crds()
