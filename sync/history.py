"""A Sync's history of applied revisions, and pinning it to an earlier one.

``status.history`` keeps the last ``spec.historyLimit`` (default 5) revisions
a Sync attempted, newest first, one entry per rendered result (Flux's
``status.history``): revision, digest of the rendered objects, first and last
time, the outcome (the Ready reason), counts and which objects it changed.

A rollback pins the Sync to an earlier commit: the annotation
``sync.kapi.dev/pin`` names it (a sha or a prefix of at least 7 hex digits;
``manage.py sync rollback``, the admin UI's button, or kubectl). The Sync then
applies that commit instead of its source's revision, and records in
``status.pin`` which source revision it was pinned at. The pin holds until it
is removed or a new revision is pushed: when the source's revision moves on,
the Sync drops the pin and applies the new one.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import orjson

from sync import commitref

__all__ = [
    "DEFAULT_LIMIT",
    "PIN_ANNOTATION",
    "digest_of",
    "digest_recorded",
    "pin_of",
    "record",
    "rollback_target",
]

PIN_ANNOTATION = "sync.kapi.dev/pin"
DEFAULT_LIMIT = 5
_CHANGED_SHOWN = 20


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def digest_of(objects: list[dict]) -> str:
    """The digest of a rendered set of objects (order included)."""
    return "sha256:" + hashlib.sha256(orjson.dumps(objects, option=orjson.OPT_SORT_KEYS)).hexdigest()


def pin_of(metadata: dict) -> str:
    """The commit the Sync is pinned to by annotation ("" when none)."""
    return commitref.annotated_commit(metadata, PIN_ANNOTATION)


def digest_recorded(status: dict, revision: str) -> str:
    """The rendered digest the newest history entry of ``revision`` recorded
    ("" when none): a pass that only checks health renders nothing, and adds
    to the entry of the pass that applied."""
    entry = next((e for e in status.get("history") or [] if isinstance(e, dict) and e.get("revision") == revision),
                 None)
    return str(entry.get("digest") or "") if entry else ""


def record(status: dict, *, revision: str, digest: str, outcome: str, limit: int,
           applied: int = 0, pruned: int = 0, changed: list[str] | None = None) -> None:
    """Add this attempt to ``status["history"]`` (newest first, at most ``limit``)."""
    now = _now()
    entries = [e for e in status.get("history") or [] if isinstance(e, dict)]
    same = next((e for e in entries if e.get("digest") == digest and e.get("revision") == revision), None)
    if same is None:
        same = {"revision": revision, "digest": digest, "firstReconciled": now, "totalReconciliations": 0}
    else:
        entries.remove(same)
    same.update(lastReconciled=now, lastReconciledStatus=outcome,
                totalReconciliations=int(same.get("totalReconciliations") or 0) + 1)
    if applied or pruned or changed or "applied" not in same:
        same.update(applied=applied, pruned=pruned, changed=(changed or [])[:_CHANGED_SHOWN])
    status["history"] = [same, *entries][: max(1, limit)]


def rollback_target(status: dict, revision: str | None = None) -> str:
    """The commit sha a rollback pins: ``revision`` (a sha or prefix, or a
    history entry's revision), else the newest successfully applied history
    entry older than the current one. Raises ValueError when there is none."""
    entries = [e for e in status.get("history") or [] if isinstance(e, dict)]
    if revision:
        wanted = revision.rsplit("sha1:", 1)[-1].strip().lower()
        if len(wanted) < 7:
            raise ValueError("give at least 7 hex digits of the commit")
        return wanted
    current = status.get("lastAppliedRevision") or ""
    for entry in entries:
        if entry.get("revision") != current and entry.get("lastReconciledStatus") == "ReconciliationSucceeded":
            return str(entry["revision"]).rsplit("sha1:", 1)[-1]
    raise ValueError("no earlier successfully applied revision in status.history")
