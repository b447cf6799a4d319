"""The one place a Sync's pass ends: its result becomes status, Events and the
delay until the next pass.

Every result is one status write (``sync.status.update_status``), with the
edits the stages collected (the pin) applied first; a condition keeps its
transition time while its status stays, so a pass that changes nothing
writes nothing. ``UpToDate`` without edits writes nothing at all.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from sync import history
from sync.apply import Outcome
from sync.attempt import Applied, Attempt, Failed, RevisionOnly, UpToDate, Waiting
from sync.status import event, remove_condition, set_condition, update_status

__all__ = ["conclude", "listing", "mark_started", "rfc3339"]

Result = Applied | Waiting | RevisionOnly | UpToDate | Failed


def conclude(attempt: Attempt, result: Result) -> float | None:
    """Write what ``result`` means for the Sync; seconds until its next pass (None: none)."""
    if isinstance(result, Failed):
        return _failed(attempt, result)
    if isinstance(result, Applied):
        return _applied(attempt, result)
    if isinstance(result, Waiting):
        return _waiting(attempt, result)
    if isinstance(result, RevisionOnly):
        _write(attempt, _revision_recorded(attempt))
        attempt.progress(f"revision {attempt.revision} does not change {attempt.path}")
        return attempt.interval
    attempt.progress("up to date")
    if attempt.edits:
        _write(attempt, lambda st: None)
    return attempt.interval


def mark_started(attempt: Attempt) -> None:
    """Reconciling=True while the pass renders, applies and prunes (Flux's
    kstatus convention): the one status write before the pass ends. Ready goes
    Unknown only for new input, not for a drift correction or a requested
    re-apply of what is already Ready."""
    status, ready = attempt.status, attempt.ready
    new_input = not (
        ready.get("status") == "True"
        and status.get("lastAppliedDigest") == attempt.digest
        and status.get("lastAppliedRevision") == attempt.revision
        and status.get("observedGeneration") == attempt.generation
    )
    pending = attempt.pending_health

    def started(st: dict) -> None:
        set_condition(st, "Reconciling", "True", "Progressing",
                      f"Applying revision {attempt.revision} with a timeout of {attempt.timeout_text}",
                      attempt.generation)
        remove_condition(st, "Stalled")
        # Observed: the change stream must not take this write for a new spec.
        st["observedGeneration"] = attempt.generation
        st.pop("pruneHeldRevision", None)
        if st.get("lastAppliedDigest") != attempt.digest:
            # Applying other input: until it is all applied, no object may be
            # taken for "applied as this digest says" (the apply's reapply),
            # even if the worker dies mid-way.
            st.pop("lastAppliedDigest", None)
        if new_input and not pending:
            set_condition(st, "Ready", "Unknown", "Progressing", "Reconciliation in progress", attempt.generation)

    _write(attempt, started)


def listing(lines: list[str], limit: int = 10) -> str:
    more = f", and {len(lines) - limit} more" if len(lines) > limit else ""
    return "[" + ", ".join(lines[:limit]) + more + "]"


def rfc3339(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _write(attempt: Attempt, change) -> None:
    def edit(st: dict) -> None:
        for collected in attempt.edits:
            collected(st)
        change(st)

    update_status(attempt.sync_type, attempt.namespace, attempt.name, edit, attempt.registry)


def _remember(attempt: Attempt, st: dict, revision: str, outcome_: str, result: Outcome | None = None) -> None:
    history.record(st, revision=revision, digest=attempt.rendered_digest, outcome=outcome_,
                   limit=attempt.history_limit, applied=result.applied if result else 0,
                   pruned=result.pruned if result else 0, changed=result.changed if result else None)


def _failed(attempt: Attempt, failure: Failed) -> float | None:
    reason, message, revision = failure.reason, failure.message, failure.revision
    attempt.progress(f"{reason}: {message}")

    def change(st: dict) -> None:
        if failure.applied is not None:
            applied_state(attempt, failure.applied.inventory, failure.applied.outcome)(st)
        if failure.record is not None:
            failure.record(st)
        if revision:
            _remember(attempt, st, revision, reason)
        set_condition(st, "Ready", "False", reason, message, attempt.generation)
        remove_condition(st, "Reconciling")
        if failure.stalled:
            set_condition(st, "Stalled", "True", reason, message, attempt.generation)
        else:
            remove_condition(st, "Stalled")
        st.pop("healthCheckDeadline", None)
        st["observedGeneration"] = attempt.generation
        if revision:
            st["lastAttemptedRevision"] = revision
        if attempt.requested_at:
            st["lastHandledReconcileAt"] = attempt.requested_at

    _write(attempt, change)
    ready = attempt.ready
    if failure.warn and (ready.get("reason") != reason or ready.get("message") != message[:4096]):
        event(attempt.sync, "Warning", reason, message, attempt.registry)
    return None if failure.stalled else attempt.retry


def applied_state(attempt: Attempt, inventory: list[dict], outcome: Outcome | None):
    """What an apply leaves in status whatever the health checks say."""

    def record(st: dict) -> None:
        st["observedGeneration"] = attempt.generation
        st["lastAttemptedRevision"] = attempt.revision
        st["lastAppliedDigest"] = attempt.digest
        st["inventory"] = {"entries": inventory}
        if outcome is not None and (outcome.applied or outcome.pruned or "applied" not in st):
            st.update(applied=outcome.applied, unchanged=outcome.unchanged, pruned=outcome.pruned)
        if attempt.requested_at:
            st["lastHandledReconcileAt"] = attempt.requested_at

    return record


def _applied(attempt: Attempt, result: Applied) -> float:
    revision, outcome = attempt.revision, result.outcome
    message = f"Applied revision: {revision}"
    record = applied_state(attempt, result.inventory, outcome)

    def succeeded(st: dict) -> None:
        record(st)
        _remember(attempt, st, revision, "ReconciliationSucceeded", outcome)
        set_condition(st, "Ready", "True", "ReconciliationSucceeded", message, attempt.generation)
        remove_condition(st, "Reconciling")
        remove_condition(st, "Stalled")
        st.pop("healthCheckDeadline", None)
        st["lastAppliedRevision"] = revision

    _write(attempt, succeeded)
    changed = outcome is not None and (outcome.applied or outcome.pruned)
    if changed or attempt.ready.get("status") != "True":
        counts = "" if outcome is None else (
            f": {outcome.applied} applied, {outcome.unchanged} unchanged, {outcome.pruned} pruned")
        event(attempt.sync, "Normal", "ReconciliationSucceeded", f"{message}{counts}", attempt.registry)
    return attempt.interval


def _waiting(attempt: Attempt, result: Waiting) -> float:
    """``spec.wait`` in progress: the state goes to status (the deadline in
    ``healthCheckDeadline``) and the queue runs the check again shortly, so a
    waiting Sync never holds a worker."""
    waiting, inventory = result.waiting, result.inventory
    attempt.progress(f"waiting for {len(waiting)} objects: {listing(waiting, 3)}")
    record = applied_state(attempt, inventory, result.outcome)

    def progressing(st: dict) -> None:
        record(st)
        if result.outcome is not None:  # the pass that applied: its counts go to history now
            _remember(attempt, st, attempt.revision, "Progressing", result.outcome)
        set_condition(st, "Ready", "Unknown", "Progressing", "Reconciliation in progress", attempt.generation)
        set_condition(st, "Reconciling", "True", "Progressing",
                      f"Waiting for {len(waiting)} of {len(inventory)} objects to become ready: "
                      f"{listing(waiting)}", attempt.generation)
        st["healthCheckDeadline"] = rfc3339(result.deadline)

    _write(attempt, progressing)
    # A status write between the check and healthCheckDeadline being stored
    # found no waiting Sync to wake: look once more now that it is.
    if attempt.target.unhealthy(inventory) != ([], waiting):
        return 0.1
    return max(0.1, min(_health_poll(), result.deadline - time.time()))


def _revision_recorded(attempt: Attempt):
    """A commit elsewhere in the repository: record the revision only."""
    revision = attempt.revision

    def record(st: dict) -> None:
        st["lastAppliedRevision"] = st["lastAttemptedRevision"] = revision
        set_condition(st, "Ready", "True", "ReconciliationSucceeded",
                      f"Applied revision: {revision}", attempt.generation)

    return record


def _health_poll() -> float:
    """Seconds between health checks while a Sync waits for its objects
    (``spec.wait``): a safety net only, since a write of a waited-on object
    wakes the check at once (``sync.healthwake``)."""
    from django.conf import settings

    return settings.SYNC_HEALTH_POLL_SECONDS

