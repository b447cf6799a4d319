"""Where a Sync stands with a pushed commit (``sync.pushwait.sync_state``), from its status alone."""

from __future__ import annotations

import os

import django
import pytest

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
django.setup()  # sync.pushwait imports the registry (no database is used here)

from sync.pushwait import sync_state  # noqa: E402

SHA, OLD = "a" * 40, "b" * 40


def _sync(status: dict, generation: int = 1, **spec) -> dict:
    return {"metadata": {"namespace": "ns", "name": "app", "generation": generation},
            "spec": {"sourceRef": {"name": "app"}, **spec}, "status": {"observedGeneration": 1, **status}}


def _ready(state: str, reason: str, message: str = "") -> dict:
    return {"type": "Ready", "status": state, "reason": reason, "message": message}


def test_ready_with_the_pushed_commit_and_its_counts():
    status = {"conditions": [_ready("True", "ReconciliationSucceeded")],
              "lastAppliedRevision": f"main@sha1:{SHA}",
              "history": [{"revision": f"main@sha1:{SHA}", "digest": "sha256:x", "applied": 3, "pruned": 1}]}
    assert sync_state(_sync(status, wait=True), SHA) == (
        "ready", f"Sync ns/app: Ready: applied main@sha1:{SHA}: 3 applied, 1 pruned, healthy")
    # Health checked in a later pass than the apply: that entry has no counts to give.
    status["history"] = [{"revision": f"main@sha1:{SHA}", "digest": "", "applied": 0, "pruned": 0}]
    assert sync_state(_sync(status, wait=True), SHA) == (
        "ready", f"Sync ns/app: Ready: applied main@sha1:{SHA}, healthy")


def test_ready_with_an_older_commit_is_still_pending():
    status = {"conditions": [_ready("True", "ReconciliationSucceeded")], "lastAppliedRevision": f"main@sha1:{OLD}"}
    assert sync_state(_sync(status), SHA) == ("pending", f"Sync ns/app: waiting to apply {SHA[:12]}")


def test_a_failed_attempt_of_the_commit_is_a_failure():
    status = {"conditions": [_ready("False", "ValidationFailed", "ConfigMap ns/a: bad")],
              "lastAttemptedRevision": f"main@sha1:{SHA}"}
    assert sync_state(_sync(status), SHA) == ("failed", "Sync ns/app failed: ValidationFailed: ConfigMap ns/a: bad")


@pytest.mark.parametrize("status", [
    # an older revision's failure, or one that names no revision (a dependency)
    {"conditions": [_ready("False", "HealthCheckFailed", "x")], "lastAttemptedRevision": f"main@sha1:{OLD}"},
    {"conditions": [_ready("False", "DependencyNotReady", "dependency ns/db is not ready")]},
    # failed once, now being tried again
    {"conditions": [_ready("False", "ReconciliationFailed", "x"),
                    {"type": "Reconciling", "status": "True", "message": "Applying revision"}],
     "lastAttemptedRevision": f"main@sha1:{SHA}"},
])
def test_what_is_not_an_outcome_of_the_commit_is_pending(status):
    assert sync_state(_sync(status), SHA)[0] == "pending"


def test_stalled_fails_and_suspended_is_not_waited_for():
    stalled = {"conditions": [_ready("False", "BuildFailed", "spec.path '../x' is outside the repository"),
                              {"type": "Stalled", "status": "True"}]}
    assert sync_state(_sync(stalled), SHA) == (
        "failed", "Sync ns/app failed: BuildFailed: spec.path '../x' is outside the repository")
    # a Stalled of an earlier spec (generation 1) is not this spec's
    assert sync_state(_sync(stalled, generation=2), SHA)[0] == "pending"
    assert sync_state(_sync({}, suspend=True), SHA)[0] == "skipped"


def test_a_long_message_is_cut_to_one_line():
    status = {"conditions": [_ready("False", "ValidationFailed", "x\n" * 500)],
              "lastAttemptedRevision": f"main@sha1:{SHA}"}
    line = sync_state(_sync(status), SHA)[1]
    assert "\n" not in line and len(line) < 400 and line.endswith("…")
