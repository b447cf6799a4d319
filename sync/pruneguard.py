"""Destructive prunes wait for a person: a revision that would delete every
object a Sync applied, or a Namespace or CustomResourceDefinition (whose
deletion takes everything in it along), is not applied silently.

A README-only commit, a ``.sourceignore`` of ``*`` or a typo in ``spec.ignore``
all render to nothing; applied as is, they would prune a whole environment.
Such a revision is held: the Sync reports ``Ready=False`` with reason
``PruneHeld`` naming what would go, records the held commit in
``status.pruneHeldRevision``, applies nothing, and push-time validation says
the same in ``remote:`` lines. It goes ahead once the Sync carries the
annotation ``sync.kapi.dev/allow-prune`` naming that commit (its full sha or
a prefix of at least 7 hex digits), so an allow never carries over to a later
revision by accident.
"""

from __future__ import annotations

from sync import commitref
from sync.apply import CRD_GROUP, Doomed

__all__ = ["ALLOW_ANNOTATION", "REASON", "allowed", "hold_message"]

ALLOW_ANNOTATION = "sync.kapi.dev/allow-prune"
REASON = "PruneHeld"
_SHOWN = 5


def allowed(metadata: dict, sha: str) -> bool:
    """Whether a Sync's ``sync.kapi.dev/allow-prune`` annotation names ``sha``."""
    return commitref.names(commitref.annotated_commit(metadata, ALLOW_ANNOTATION), sha)


def _names(targets: list[Doomed]) -> str:
    shown = ", ".join(t.name for t in targets[:_SHOWN])
    return shown + (f" and {len(targets) - _SHOWN} more" if len(targets) > _SHOWN else "")


def hold_message(targets: list[Doomed], inventory_size: int, remaining: int) -> str | None:
    """Why pruning ``targets`` (of an inventory of ``inventory_size``, leaving
    ``remaining`` objects) needs an explicit allow; None when it does not."""
    if not targets:
        return None
    reasons = []
    if remaining == 0 and inventory_size:
        reasons.append(f"delete all {inventory_size} objects this Sync applied")
    namespaces = [t for t in targets if t.group == "" and t.kind == "Namespace"]
    if namespaces:
        reasons.append(f"delete Namespace {_names(namespaces)}")
    crds = [t for t in targets if t.group == CRD_GROUP and t.kind == "CustomResourceDefinition"]
    if crds:
        reasons.append(f"delete CustomResourceDefinition {_names(crds)}")
    return " and ".join(reasons) or None
