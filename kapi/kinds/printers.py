"""Table columns of kinds whose only behaviour is how kube prints them.

Ported from kube's ``pkg/printers/internalversion/printers.go``: the columns and
cell formats kubectl shows for LimitRange, PodTemplate, ControllerRevision,
EndpointSlice, RuntimeClass and the admission webhook configurations (the
other kinds print from their own strategies).
"""

from __future__ import annotations

from typing import Any

from kapi.registry.strategy import NAME_COLUMN, Column, Object, Strategy

__all__ = [
    "ControllerRevisionStrategy",
    "EndpointSliceStrategy",
    "LimitRangeStrategy",
    "PodTemplateStrategy",
    "RuntimeClassStrategy",
    "WebhookConfigurationStrategy",
    "list_with_more",
]

_CREATED_AT = Column(
    "Created At",
    type="date",
    description="CreationTimestamp is a timestamp representing the server time when this "
    "object was created. It is not guaranteed to be set in happens-before order across "
    "separate operations. Clients may not set this value. It is represented in RFC3339 "
    "form and is in UTC.",
)


def list_with_more(items: list[str], limit: int = 3) -> str:
    """kube's listWithMoreString: the first ``limit``, then ``+ N more...``;
    ``<unset>`` for none."""
    shown = ",".join(items[:limit])
    if len(items) > limit:
        return f"{shown} + {len(items) - limit} more..."
    return shown or "<unset>"


def _name(obj: Object) -> str:
    return (obj.get("metadata") or {}).get("name", "")


class LimitRangeStrategy(Strategy):
    """NAME and CREATED AT, as kube prints LimitRanges."""

    def table_definition(self) -> list[Column]:
        return [NAME_COLUMN, _CREATED_AT]

    def table_row_cells(self, obj: Object) -> list[Any]:
        return [_name(obj), (obj.get("metadata") or {}).get("creationTimestamp", "")]


class PodTemplateStrategy(Strategy):
    """CONTAINERS, IMAGES and POD LABELS of the template (no AGE)."""

    def table_definition(self) -> list[Column]:
        return [
            NAME_COLUMN,
            Column("Containers", description="Names of each container in the template."),
            Column("Images", description="Images referenced by each container in the template."),
            Column("Pod Labels", description="The labels for the pod template."),
        ]

    def table_row_cells(self, obj: Object) -> list[Any]:
        template = obj.get("template") or {}
        containers = [c for c in (template.get("spec") or {}).get("containers") or () if isinstance(c, dict)]
        labels = (template.get("metadata") or {}).get("labels") or {}
        return [
            _name(obj),
            ",".join(c.get("name", "") for c in containers),
            ",".join(c.get("image", "") for c in containers),
            ",".join(f"{k}={v}" for k, v in sorted(labels.items())) or "<none>",
        ]


class ControllerRevisionStrategy(Strategy):
    """CONTROLLER as ``kind.group/name`` and REVISION."""

    def table_columns(self) -> list[Column]:
        return [
            Column("Controller", description="Controller of the object"),
            Column("Revision", type="integer", description="Revision indicates the revision of the state represented by Data."),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        owners = (obj.get("metadata") or {}).get("ownerReferences") or ()
        ref = next((o for o in owners if isinstance(o, dict) and o.get("controller")), None)
        controller = "<none>"
        if ref is not None:
            group = str(ref.get("apiVersion", "")).rpartition("/")[0]
            kind = str(ref.get("kind", "")).lower() + (f".{group}" if group else "")
            controller = f"{kind}/{ref.get('name', '')}" if kind else ref.get("name", "")
        return [controller, obj.get("revision", 0)]


class EndpointSliceStrategy(Strategy):
    """ADDRESSTYPE, PORTS and ENDPOINTS (three of each, then ``+ N more...``)."""

    def table_columns(self) -> list[Column]:
        return [
            Column("AddressType", description="Type of address carried by this EndpointSlice."),
            Column("Ports", description="Port numbers offered by this EndpointSlice."),
            Column("Endpoints", description="Endpoints offered by this EndpointSlice."),
        ]

    def table_cells(self, obj: Object) -> list[Any]:
        ports = []
        for port in obj.get("ports") or ():
            if isinstance(port, dict):
                ports.append(str(port["port"]) if port.get("port") is not None else port.get("name") or "*")
        addresses = [
            a
            for e in obj.get("endpoints") or ()
            if isinstance(e, dict)
            for a in e.get("addresses") or ()
        ]
        return [obj.get("addressType", ""), list_with_more(ports), list_with_more(addresses)]


class RuntimeClassStrategy(Strategy):
    def table_columns(self) -> list[Column]:
        return [Column("Handler", description="Handler specifies the underlying runtime and configuration that the CRI implementation will use to handle pods of this class.")]

    def table_cells(self, obj: Object) -> list[Any]:
        return [obj.get("handler", "")]


class WebhookConfigurationStrategy(Strategy):
    """WEBHOOKS: how many (Mutating and ValidatingWebhookConfiguration)."""

    def table_columns(self) -> list[Column]:
        return [Column("Webhooks", type="integer", description="Webhooks indicates the number of webhooks in the configuration.")]

    def table_cells(self, obj: Object) -> list[Any]:
        return [len(obj.get("webhooks") or ())]
