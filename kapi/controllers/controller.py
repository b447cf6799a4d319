"""What a controller is to the runtime: a name, and what reconciling a key does.

After controller-runtime's ``reconcile.Reconciler``: ``reconcile(item,
registry)`` returns ``requeue_after``, seconds until the key must be
reconciled again (0: at once), or None when it is done; an exception is an
error, retried with exponential backoff (``runner``). The runtime owns
everything else: the work table, leases, per-key exclusivity, the change
feeds, timers. Which changes map to which keys is a controller module's
``Watch`` (``kapi.controllers.feed``).

Controller modules are named in ``settings.KAPI_CONTROLLERS``; each has
``CONTROLLERS`` (a list of ``Controller``) and may have ``WATCHES`` (a list of
``Watch``). The runtime imports them when it first needs them, so that it
imports nothing above it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any

from django.conf import settings

if TYPE_CHECKING:
    from kapi.controllers.feed import Watch

__all__ = ["Controller", "Item", "controller_for", "controllers", "long_running", "watches"]


@dataclass
class Item:
    """One claimed work item: the key to reconcile and what the table says of it."""

    id: int
    controller: str
    key: str
    group: str
    resource: str
    namespace: str
    name: str
    argument: str
    generation: int
    attempts: int
    request_id: str = ""
    #: What the requests since the last run said ("drift"...).
    hints: list[str] = field(default_factory=list)
    #: The claim's token (``workqueue``).
    holder: str = ""


class Controller:
    """A controller: subclass it, set ``name`` and implement ``reconcile``."""

    #: Unique; the work table's ``controller`` column.
    name: str = ""
    #: Its items run before others of a batch (they ask for more work).
    first: bool = False
    #: Consecutive items commit in one transaction, each in a savepoint
    #: (many small deletes: one WAL flush per group instead of per item).
    grouped: bool = False
    #: The item acts on its object as it is now: its log lines carry the
    #: request that last wrote the object rather than the one that asked.
    acts_on_current_state: bool = False
    #: Errors logged without a traceback (expected ones: a kube Status...).
    quiet_errors: tuple[type[BaseException], ...] = ()
    #: A reconcile may outlast a lease (a Sync: git, apply, health checks):
    #: its items are claimed one at a time and their lease is extended while
    #: they run.
    long_running: bool = False
    #: Backoff after an error: ``backoff_base * 2**attempts`` seconds, at most
    #: ``backoff_max``.
    backoff_base: float = 0.5
    backoff_max: float = 60.0

    def reconcile(self, item: Item, registry: Any) -> float | None:
        """Reconcile ``item.key``; return ``requeue_after`` seconds or None."""
        raise NotImplementedError


@cache
def _modules() -> tuple:
    return tuple(import_module(name) for name in settings.KAPI_CONTROLLERS)


@cache
def _controllers() -> dict[str, Controller]:
    found: dict[str, Controller] = {}
    for module in _modules():
        for controller in getattr(module, "CONTROLLERS", ()):
            if controller.name in found:
                raise ValueError(f"two controllers named {controller.name!r}")
            found[controller.name] = controller
    return found


def controller_for(name: str) -> Controller | None:
    """The controller ``name``, or None (an item of a controller removed since)."""
    return _controllers().get(name)


def controllers() -> list[Controller]:
    return list(_controllers().values())


def long_running() -> list[str]:
    """The names of the long-running controllers."""
    return [c.name for c in _controllers().values() if c.long_running]


def watches() -> list[Watch]:
    """Every controller module's watches."""
    return [w for module in _modules() for w in getattr(module, "WATCHES", ())]
