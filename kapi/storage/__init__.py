"""Storage: rows, resourceVersions and the change log (see ``interface.py``)."""

from kapi.storage.errors import (
    KeyExists,
    KeyNotFound,
    NamespaceTerminating,
    ResourceVersionConflict,
    ResourceVersionExpired,
    ResourceVersionTooLarge,
    StorageError,
)
from kapi.storage.interface import Key, ListPage, ListQuery, Preconditions, Storage

__all__ = [
    "Key",
    "KeyExists",
    "KeyNotFound",
    "ListPage",
    "ListQuery",
    "NamespaceTerminating",
    "Preconditions",
    "ResourceVersionConflict",
    "ResourceVersionExpired",
    "ResourceVersionTooLarge",
    "Storage",
    "StorageError",
    "default_storage",
]


def default_storage() -> Storage:
    from kapi.storage.postgres import PostgresStorage

    return PostgresStorage()
