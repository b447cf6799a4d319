"""What every handler is given: the resource, where, who, and the query options."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kapi.registry.resource import ResourceType

__all__ = ["RequestScope", "Result"]


@dataclass
class RequestScope:
    resource: ResourceType
    namespace: str | None
    name: str = ""
    subresource: str = ""
    user: Any = None
    query: Mapping[str, Any] = field(default_factory=dict)
    user_agent: str = ""

    def param(self, name: str, default: str | None = None) -> str | None:
        value = self.query.get(name, default)
        if isinstance(value, list):
            return value[-1] if value else default
        return value

    def params(self, name: str) -> list[str]:
        getlist = getattr(self.query, "getlist", None)
        if getlist is not None:
            return list(getlist(name))
        value = self.query.get(name)
        if value is None:
            return []
        return list(value) if isinstance(value, list) else [value]

    def has(self, name: str) -> bool:
        return name in self.query


@dataclass
class Result:
    """A handler's answer: HTTP status, the object, and ``Warning`` texts."""

    status: int
    body: dict
    warnings: list[str] = field(default_factory=list)
    # For lists/gets: whether ``as=Table`` may apply (a Status may not be transformed).
    transformable: bool = True
