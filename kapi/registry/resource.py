"""A resource type as data: everything the generic registry needs to serve it.

One ``ResourceType`` per (group, version, plural). Built-in types are declared in
``kapi.kinds.builtin``; custom resources are built from
CustomResourceDefinitions the same way (``kapi.kinds.custom``), so one code path
serves them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kapi.registry.strategy import Strategy

__all__ = ["DEFAULT_VERBS", "ResourceType", "Subresource"]

DEFAULT_VERBS = (
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
)


@dataclass(frozen=True)
class Subresource:
    name: str
    kind: str
    verbs: tuple[str, ...] = ("get", "patch", "update")
    group: str | None = None
    version: str | None = None


@dataclass(frozen=True)
class ResourceType:
    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    strategy: Strategy
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    verbs: tuple[str, ...] = DEFAULT_VERBS
    subresources: tuple[Subresource, ...] = ()
    # The selectable fields beyond metadata.name / metadata.namespace, as dotted
    # paths into the object (kube's per-type field label conversion funcs).
    field_selectors: tuple[str, ...] = ()
    # (field, value) for selectable fields that read as more than "" when absent:
    # Go's zero value of a bool is "false" (a node's spec.unschedulable).
    field_defaults: tuple[tuple[str, str], ...] = ()
    # Which name syntax the type requires: "subdomain", "label" or "path-segment".
    name_rule: str = "subdomain"
    # The (group, plural) whose rows hold this type: a resource served in two
    # group-versions (Event in core/v1 and events.k8s.io/v1) stores once.
    storage_group: str | None = None
    storage_resource: str | None = None
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_version(self) -> str:
        return self.api_version

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"

    @property
    def stored_group(self) -> str:
        return self.group if self.storage_group is None else self.storage_group

    @property
    def stored_resource(self) -> str:
        return self.storage_resource or self.plural

    @property
    def selectable_fields(self) -> tuple[str, ...]:
        base = ("metadata.name", "metadata.namespace") if self.namespaced else ("metadata.name",)
        return base + tuple(f for f in self.field_selectors if f not in base)

    def subresource(self, name: str) -> Subresource | None:
        for sub in self.subresources:
            if sub.name == name:
                return sub
        return None

    def supports(self, verb: str) -> bool:
        return verb in self.verbs
