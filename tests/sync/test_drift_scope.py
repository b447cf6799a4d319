"""Which writes of labelled objects are a Sync's drift (``sync.changes``):
only objects ``kapi-sync`` applied. The Endpoints and EndpointSlices that the
controllers make for a Service copy the Service's labels, the Sync's among
them (as kube's controllers do); their updates at every Pod change must not
reconcile the Sync in full each time."""

from __future__ import annotations

import pytest

from kapi.storage import Key
from kapi.storage.interface import Change
from sync import changes, controllers

LABELS = {"sync.kapi.dev/name": "app", "sync.kapi.dev/namespace": "team"}


def _change(type_: str, resource: str, managers: list[tuple[str, str]]) -> Change:
    meta = {
        "name": "web", "namespace": "team", "labels": LABELS,
        "managedFields": [{"manager": m, "operation": "Apply" if m == "kapi-sync" else "Update", "time": t,
                           "fieldsType": "FieldsV1", "fieldsV1": {}} for m, t in managers],
    }
    return Change(revision=7, type=type_, key=Key("", resource, "team", "web"), uid="u", metadata=meta, status={})


def _asked(*batch: Change) -> set:
    plan = changes._Plan()
    for change in batch:
        plan.add(change)
    return {(key, reason) for key, (reason, _drift, _rid) in plan.requests.items()}


DRIFT = {((controllers.SYNC, "team", "app"), "drift")}


@pytest.mark.parametrize("type_", ["MODIFIED", "DELETED"])
def test_a_controllers_copy_of_the_labels_is_not_drift(type_):
    endpoints = _change(type_, "endpoints", [("kapi-endpoints-controller", "2026-11-28T10:00:05Z")])
    assert _asked(endpoints) == set()


def test_another_managers_write_of_an_applied_object_is_drift():
    service = _change("MODIFIED", "services", [("kapi-sync", "2026-11-28T10:00:00Z"),
                                               ("kubectl-edit", "2026-11-28T10:00:05Z")])
    assert _asked(service) == DRIFT
    deleted = _change("DELETED", "services", [("kapi-sync", "2026-11-28T10:00:00Z")])
    assert _asked(deleted) == DRIFT


def test_an_object_stripped_of_its_managed_fields_is_drift():
    assert _asked(_change("MODIFIED", "services", [])) == DRIFT


def test_the_syncs_own_last_write_is_not_drift():
    service = _change("MODIFIED", "services", [("kubectl-edit", "2026-11-28T10:00:00Z"),
                                               ("kapi-sync", "2026-11-28T10:00:05Z")])
    assert _asked(service) == set()
