"""The generic registry: resource types as data, strategies, and the verbs over storage."""

from kapi.registry.catalog import Catalog, catalog
from kapi.registry.resource import ResourceType, Subresource
from kapi.registry.store import Registry

__all__ = ["Catalog", "Registry", "ResourceType", "Subresource", "catalog"]
