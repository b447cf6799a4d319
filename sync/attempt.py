"""One reconcile of a Sync: what it starts from, and how it can end.

``Attempt`` holds the inputs every stage of ``sync.reconcile`` reads (the Sync
as read at the start, its identity, its intervals) and what earlier stages
found (the source revision, the digest of the input); stages take it and
return their own outputs. A pass ends with one of the results below, and
``sync.conclude`` alone turns a result into the Sync's status, Events and the
delay until the next pass.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kapi.auth import access
from kapi.registry.store import Registry
from sync import history
from sync.apply import Outcome
from sync.identity import identity
from sync.kinds import REQUESTED_AT, parse_duration, sync_type

__all__ = ["Applied", "Attempt", "Failed", "Progress", "RevisionOnly", "UpToDate", "Waiting"]

Progress = Callable[[str], None]
StatusEdit = Callable[[dict], None]


@dataclass
class Attempt:
    registry: Registry
    sync: dict
    drift: bool
    progress: Progress
    #: Status edits made along the way (the pin), written with the conclusion.
    edits: list[StatusEdit] = field(default_factory=list)
    # Found by the stages.
    repo: dict | None = None
    revision: str = ""
    sha: str = ""
    digest: str = ""
    #: The digest of the rendered objects (history), once rendered.
    rendered_digest: str = ""
    variables: dict[str, str] = field(default_factory=dict)
    deadline: float = 0.0
    #: Where the Sync applies (``sync.target``), once connected.
    target: Any = None

    def __post_init__(self) -> None:
        meta, spec = self.sync["metadata"], self.sync.get("spec") or {}
        self.namespace: str = meta["namespace"]
        self.name: str = meta["name"]
        self.meta, self.spec = meta, spec
        self.status: dict = self.sync.get("status") or {}
        self.generation = meta.get("generation")
        self.interval = parse_duration(spec.get("interval"), 600.0)
        self.retry = parse_duration(spec.get("retryInterval"), min(self.interval, 30.0))
        self.timeout = parse_duration(spec.get("timeout"), self.interval)
        self.timeout_text: str = spec.get("timeout") or spec.get("interval") or "10m"
        self.requested_at: str | None = (meta.get("annotations") or {}).get(REQUESTED_AT)
        self.new_request = bool(self.requested_at) and self.requested_at != self.status.get("lastHandledReconcileAt")
        self.history_limit = int(spec.get("historyLimit") or history.DEFAULT_LIMIT)
        self.path: str = spec.get("path") or "./"
        # Everything the stages do acts as the Sync's ServiceAccount (sync.identity).
        self.user: Any = identity(self.namespace, spec)
        self.writer: Registry = access.registry_for(self.user)

    @property
    def sync_type(self):
        return sync_type()

    @property
    def ready(self) -> dict:
        """The Ready condition as the pass found it."""
        return next((c for c in self.status.get("conditions") or [] if c.get("type") == "Ready"), {})

    @property
    def pending_health(self) -> str | None:
        """``healthCheckDeadline`` of a ``spec.wait`` check in progress."""
        return self.status.get("healthCheckDeadline")

    @property
    def same_input(self) -> bool:
        """The last attempt applied this very input (revision, digest, generation)."""
        return (
            self.status.get("lastAppliedDigest") == self.digest
            and self.status.get("lastAttemptedRevision") == self.revision
            and self.status.get("observedGeneration") == self.generation
            and not self.new_request
        )

    @property
    def inventory(self) -> list[dict]:
        """The inventory the last apply recorded."""
        return (self.status.get("inventory") or {}).get("entries") or []


@dataclass
class Applied:
    """Every object applied (and healthy, with ``spec.wait``): Ready=True."""

    inventory: list[dict]
    outcome: Outcome | None


class Failed(Exception):
    """Ready=False: retried at the retry interval or, ``stalled``, not until
    the spec changes (Flux's Stalled=True); a Warning Event unless ``warn`` is
    false (a state to wait out, not a failure). ``applied``: what an apply
    left before its health check failed; ``record``: another status edit."""

    def __init__(self, reason: str, message: str, revision: str | None = None, *,
                 applied: Applied | None = None, record: StatusEdit | None = None,
                 stalled: bool = False, warn: bool = True) -> None:
        super().__init__(f"{reason}: {message}")
        self.reason, self.message, self.revision = reason, message, revision
        self.applied, self.record, self.stalled, self.warn = applied, record, stalled, warn


@dataclass
class Waiting:
    """Applied; ``spec.wait`` objects still in progress until ``deadline``."""

    deadline: float
    inventory: list[dict]
    outcome: Outcome | None
    waiting: list[str]


@dataclass
class RevisionOnly:
    """A commit that does not change what the Sync renders: the revision is recorded."""


@dataclass
class UpToDate:
    """Nothing new: nothing to write."""
