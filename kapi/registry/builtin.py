"""The built-in resource types kapi serves, declared as data."""

from __future__ import annotations

from kapi.registry.resource import ResourceType, Subresource
from kapi.registry.types.configmaps import ConfigMapStrategy
from kapi.registry.types.events import EventStrategy, EventsV1Strategy
from kapi.registry.types.leases import LeaseStrategy
from kapi.registry.types.namespaces import NamespaceStrategy
from kapi.registry.types.secrets import SecretStrategy
from kapi.registry.types.serviceaccounts import ServiceAccountStrategy

__all__ = ["BUILTIN_TYPES"]

_EVENT_FIELDS = (
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
)

BUILTIN_TYPES: tuple[ResourceType, ...] = (
    ResourceType(
        group="",
        version="v1",
        kind="Namespace",
        plural="namespaces",
        singular="namespace",
        namespaced=False,
        strategy=NamespaceStrategy(),
        short_names=("ns",),
        verbs=("create", "delete", "get", "list", "patch", "update", "watch"),
        subresources=(
            Subresource("status", "Namespace"),
            Subresource("finalize", "Namespace", verbs=("update",)),
        ),
        field_selectors=("status.phase",),
        name_rule="label",
    ),
    ResourceType(
        group="",
        version="v1",
        kind="ConfigMap",
        plural="configmaps",
        singular="configmap",
        namespaced=True,
        strategy=ConfigMapStrategy(),
        short_names=("cm",),
    ),
    ResourceType(
        group="",
        version="v1",
        kind="Secret",
        plural="secrets",
        singular="secret",
        namespaced=True,
        strategy=SecretStrategy(),
        field_selectors=("type",),
    ),
    ResourceType(
        group="",
        version="v1",
        kind="ServiceAccount",
        plural="serviceaccounts",
        singular="serviceaccount",
        namespaced=True,
        strategy=ServiceAccountStrategy(),
        short_names=("sa",),
    ),
    ResourceType(
        group="",
        version="v1",
        kind="Event",
        plural="events",
        singular="event",
        namespaced=True,
        strategy=EventStrategy(),
        short_names=("ev",),
        field_selectors=_EVENT_FIELDS,
    ),
    ResourceType(
        group="events.k8s.io",
        version="v1",
        kind="Event",
        plural="events",
        singular="event",
        namespaced=True,
        strategy=EventsV1Strategy(),
        short_names=("ev",),
        storage_group="",
        storage_resource="events",
        field_selectors=("reason", "type", "reportingController", "regarding.kind",
                         "regarding.name", "regarding.namespace", "regarding.uid"),
    ),
    ResourceType(
        group="coordination.k8s.io",
        version="v1",
        kind="Lease",
        plural="leases",
        singular="lease",
        namespaced=True,
        strategy=LeaseStrategy(),
    ),
)
