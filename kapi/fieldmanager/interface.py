"""The ``Manager`` every link of the field manager chain implements.

Each link wraps the next one and adds one concern (kube's
``pkg/util/managedfields/internal``): ``update`` records a non-apply write,
``apply`` merges an applied configuration. Objects are plain dicts without
``metadata.managedFields``; ownership travels separately in ``Managed``.
``apply`` returns ``None`` as the object when the live object does not change.
"""

from __future__ import annotations

from typing import Any

from kapi.fieldmanager.managed import Managed

__all__ = ["Manager", "Object"]

Object = dict[str, Any]


class Manager:
    def update(
        self, live: Object, new: Object, managed: Managed, manager: str
    ) -> tuple[Object, Managed]:
        raise NotImplementedError

    def apply(
        self, live: Object, config: Object, managed: Managed, manager: str, force: bool
    ) -> tuple[Object | None, Managed]:
        raise NotImplementedError


class Wrapper(Manager):
    """A link that passes everything through to ``inner`` unless it overrides it."""

    def __init__(self, inner: Manager) -> None:
        self.inner = inner

    def update(self, live, new, managed, manager):
        return self.inner.update(live, new, managed, manager)

    def apply(self, live, config, managed, manager, force):
        return self.inner.apply(live, config, managed, manager, force)
