"""The generic registry's contract (``kapi.registry.store.Registry``), in
process on the real PostgreSQL storage: what every kind gets from the store
before any kind-specific code, as kube-apiserver's ``registry/generic/registry``
store gives it. The same behaviours are tested over HTTP with real clients in
``tests/api``; these run in milliseconds and name the layer that owns them."""

from __future__ import annotations

import pytest

from kapi.errors import StatusError
from kapi.registry.catalog import catalog
from kapi.registry.options import CreateOptions, DeleteOptions, UpdateOptions
from kapi.storage.interface import Preconditions


@pytest.fixture
def configmaps():
    return catalog().lookup("", "v1", "configmaps")


def _cm(name: str = "", **meta) -> dict:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": dict(meta), "data": {"k": "v"}}
    if name:
        body["metadata"]["name"] = name
    return body


def _refused(call, code: int, reason: str) -> StatusError:
    with pytest.raises(StatusError) as caught:
        call()
    assert (caught.value.code, caught.value.reason) == (code, reason), caught.value.status
    return caught.value


def _absent(registry, rt, namespace: str, name: str) -> None:
    _refused(lambda: registry.get(rt, namespace, name), 404, "NotFound")


def test_create_sets_system_fields_and_get_reads_it_back(registry, configmaps, namespace) -> None:
    created = registry.create(configmaps, namespace, _cm("a"))
    meta = created["metadata"]
    assert meta["uid"] and meta["creationTimestamp"] and int(meta["resourceVersion"]) > 0
    assert meta["managedFields"][0]["operation"] == "Update"
    assert registry.get(configmaps, namespace, "a") == created


def test_a_taken_name_is_refused_and_the_first_object_kept(registry, configmaps, namespace) -> None:
    first = registry.create(configmaps, namespace, _cm("a"))
    _refused(lambda: registry.create(configmaps, namespace, _cm("a")), 409, "AlreadyExists")
    assert registry.get(configmaps, namespace, "a") == first


def test_generate_name_retries_a_taken_suffix(registry, configmaps, namespace, monkeypatch) -> None:
    """kube retries a generated name that is taken (a suffix collision)."""
    from kapi.registry import store

    suffixes = iter(["aaaaa", "aaaaa", "bbbbb"])
    monkeypatch.setattr(store, "_random_suffix", lambda: next(suffixes))
    first = registry.create(configmaps, namespace, _cm(generateName="gen-"))
    second = registry.create(configmaps, namespace, _cm(generateName="gen-"))
    assert (first["metadata"]["name"], second["metadata"]["name"]) == ("gen-aaaaa", "gen-bbbbb")


def test_dry_run_create_checks_everything_but_writes_nothing(registry, configmaps, namespace) -> None:
    answer = registry.create(configmaps, namespace, _cm("dry"), CreateOptions(dry_run=True))
    assert answer["metadata"]["name"] == "dry"
    _absent(registry, configmaps, namespace, "dry")
    registry.create(configmaps, namespace, _cm("taken"))
    _refused(
        lambda: registry.create(configmaps, namespace, _cm("taken"), CreateOptions(dry_run=True)),
        409, "AlreadyExists",
    )


def test_create_in_a_missing_namespace_is_not_found(registry, configmaps) -> None:
    _refused(lambda: registry.create(configmaps, "no-such-namespace", _cm("a")), 404, "NotFound")


def test_update_at_a_stale_resource_version_is_a_conflict(registry, configmaps, namespace) -> None:
    created = registry.create(configmaps, namespace, _cm("a"))
    changed = {**created, "data": {"k": "new"}}
    updated, was_created = registry.update(configmaps, namespace, "a", changed)
    assert not was_created and int(updated["metadata"]["resourceVersion"]) > int(
        created["metadata"]["resourceVersion"]
    )
    stale = {**created, "data": {"k": "lost"}}
    _refused(lambda: registry.update(configmaps, namespace, "a", stale), 409, "Conflict")
    assert registry.get(configmaps, namespace, "a")["data"] == {"k": "new"}


def test_an_unchanged_update_writes_nothing(registry, configmaps, namespace) -> None:
    """kube's no-op update: the same object back, at the same resourceVersion."""
    created = registry.create(configmaps, namespace, _cm("a"))
    same, _ = registry.update(configmaps, namespace, "a", created)
    assert same["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


def test_dry_run_update_and_delete_change_nothing(registry, configmaps, namespace) -> None:
    created = registry.create(configmaps, namespace, _cm("a"))
    registry.update(configmaps, namespace, "a", {**created, "data": {"k": "dry"}},
                    UpdateOptions(dry_run=True))
    registry.delete(configmaps, namespace, "a", DeleteOptions(dry_run=True))
    assert registry.get(configmaps, namespace, "a") == created


def test_delete_preconditions_on_uid_and_resource_version(registry, configmaps, namespace) -> None:
    created = registry.create(configmaps, namespace, _cm("a"))
    for pre in (Preconditions(uid="not-its-uid"), Preconditions(resource_version=1)):
        _refused(
            lambda pre=pre: registry.delete(configmaps, namespace, "a", DeleteOptions(preconditions=pre)),
            409, "Conflict",
        )
    meta = created["metadata"]
    pre = Preconditions(uid=meta["uid"], resource_version=int(meta["resourceVersion"]))
    _, deleted_now = registry.delete(configmaps, namespace, "a", DeleteOptions(preconditions=pre))
    assert deleted_now
    _absent(registry, configmaps, namespace, "a")


def test_finalizers_hold_a_deletion_until_the_last_is_removed(registry, configmaps, namespace) -> None:
    registry.create(configmaps, namespace, _cm("held", finalizers=["example.com/one", "example.com/two"]))
    marked, deleted_now = registry.delete(configmaps, namespace, "held")
    assert not deleted_now and marked["metadata"]["deletionTimestamp"]
    assert registry.get(configmaps, namespace, "held")["metadata"]["deletionTimestamp"]

    one_left = registry.get(configmaps, namespace, "held")
    one_left["metadata"]["finalizers"] = ["example.com/two"]
    kept, _ = registry.update(configmaps, namespace, "held", one_left)
    assert kept["metadata"]["finalizers"] == ["example.com/two"]

    # A finalizer may not be added to an object being deleted.
    kept["metadata"]["finalizers"] = ["example.com/two", "example.com/three"]
    _refused(lambda: registry.update(configmaps, namespace, "held", kept), 422, "Invalid")

    last = registry.get(configmaps, namespace, "held")
    last["metadata"]["finalizers"] = []
    registry.update(configmaps, namespace, "held", last)
    _absent(registry, configmaps, namespace, "held")


def test_foreground_deletion_adds_its_finalizer(registry, configmaps, namespace) -> None:
    registry.create(configmaps, namespace, _cm("fg"))
    marked, deleted_now = registry.delete(
        configmaps, namespace, "fg", DeleteOptions(propagation_policy="Foreground")
    )
    assert not deleted_now
    assert marked["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert marked["metadata"]["deletionTimestamp"]


def test_invalid_objects_are_refused_with_their_causes_and_not_written(
    registry, configmaps, namespace
) -> None:
    error = _refused(lambda: registry.create(configmaps, namespace, _cm("Not_A_Name")), 422, "Invalid")
    assert error.status["details"]["causes"][0]["field"] == "metadata.name"
    _absent(registry, configmaps, namespace, "Not_A_Name")
