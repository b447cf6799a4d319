"""Key-level storage errors.

The registry turns each into a Kubernetes ``Status`` (``kapi.errors``)::

    StorageError
    ├── KeyNotFound            the object does not exist
    ├── KeyExists              create of a name that is taken
    ├── NamespaceTerminating   create in a namespace that is being deleted
    ├── ResourceVersionConflict  compare-and-swap lost: the object changed
    ├── ResourceVersionExpired   asked for history that was compacted
    └── ResourceVersionTooLarge  asked for a version not yet written
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kapi.storage.interface import Key

__all__ = [
    "KeyExists",
    "KeyNotFound",
    "NamespaceTerminating",
    "ResourceVersionConflict",
    "ResourceVersionExpired",
    "ResourceVersionTooLarge",
    "StorageError",
]


class StorageError(Exception):
    def __init__(self, key: Key | None = None, message: str = "") -> None:
        super().__init__(message or self.__class__.__name__)
        self.key = key
        self.message = message


class KeyNotFound(StorageError):
    pass


class KeyExists(StorageError):
    pass


class NamespaceTerminating(StorageError):
    """``key`` is the namespace's: it is Terminating, so it takes no new objects."""


class ResourceVersionConflict(StorageError):
    pass


class ResourceVersionExpired(StorageError):
    pass


class ResourceVersionTooLarge(StorageError):
    pass
