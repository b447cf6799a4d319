"""A quota's charge and the write it admits commit together (in process, on
the real PostgreSQL): the quota controller's recount, running on its own
connection in the middle of a create, can never put back a count that
misses the object whose charge it read, and a refused or failed write takes
its charge with it. Over HTTP with the controller running: ``tests/quota``."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection

from kapi.errors import StatusError
from kapi.quota.controller import recompute
from kapi.registry import store
from kapi.registry.catalog import catalog
from kapi.registry.store import Registry


def _rt(resource: str):
    return catalog().lookup("", "v1", resource)


def _quota(registry, namespace: str, name: str, hard: dict) -> None:
    registry.create(_rt("resourcequotas"), namespace, {"metadata": {"name": name}, "spec": {"hard": hard}})
    recompute(namespace, registry)


def _used(registry, namespace: str, name: str) -> dict:
    return registry.get(_rt("resourcequotas"), namespace, name)["status"]["used"]


def _refused(call) -> StatusError:
    with pytest.raises(StatusError) as caught:
        call()
    assert caught.value.code == 403, caught.value.status
    return caught.value


class _RecountInTheWindow:
    """Before the admitted object's row is written, runs the quota
    controller's recount on another thread (its own connection), and lets the
    write go on once that recount has ended or waits for this transaction
    (on a row lock, or in the horizon's wait for the writers in flight)."""

    def __init__(self, namespace: str, name: str) -> None:
        self.namespace, self.name = namespace, name
        self.thread: threading.Thread | None = None
        self.pid: int | None = None
        self.error: BaseException | None = None
        self._started = threading.Event()

    def __call__(self, rt, obj, deleted) -> None:
        if self.thread is not None or obj["metadata"].get("name") != self.name:
            return
        self.thread = threading.Thread(target=self._recount, daemon=True)
        self.thread.start()
        assert self._started.wait(30)
        deadline = time.monotonic() + 30
        while self.thread.is_alive() and not self._waiting():
            assert time.monotonic() < deadline, "the recount neither ended nor waited"
            time.sleep(0.01)

    def _recount(self) -> None:
        try:
            with connection.cursor() as cur:
                cur.execute("SELECT pg_backend_pid()")
                (self.pid,) = cur.fetchone()
            self._started.set()
            recompute(self.namespace, Registry())
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.error = exc
        finally:
            self._started.set()
            connection.close()

    def _waiting(self) -> bool:
        with connection.cursor() as cur:
            cur.execute("SELECT pg_stat_clear_snapshot()")
            cur.execute("SELECT state, wait_event_type, wait_event FROM pg_stat_activity WHERE pid = %s",
                        [self.pid])
            row = cur.fetchone()
        return row is not None and row[0] == "active" and (row[1] == "Lock" or row[2] == "PgSleep")


def test_a_recount_during_a_create_cannot_undo_its_charge(registry, namespace, monkeypatch) -> None:
    _quota(registry, namespace, "q", {"secrets": "1"})
    assert _used(registry, namespace, "q") == {"secrets": "0"}
    recount = _RecountInTheWindow(namespace, "a")
    monkeypatch.setattr(store, "BEFORE_WRITE_OBSERVERS", [*store.BEFORE_WRITE_OBSERVERS, recount])

    registry.create(_rt("secrets"), namespace, {"metadata": {"name": "a"}})
    recount.thread.join(30)
    assert not recount.thread.is_alive() and recount.error is None, recount.error

    assert _used(registry, namespace, "q") == {"secrets": "1"}
    refused = _refused(lambda: registry.create(_rt("secrets"), namespace, {"metadata": {"name": "b"}}))
    assert "exceeded quota: q" in refused.status["message"]
    assert [s["metadata"]["name"] for s in registry.list(_rt("secrets"), namespace)["items"]] == ["a"]


def test_a_create_refused_by_a_later_quota_takes_back_the_first_charge(registry, namespace) -> None:
    """Quotas are charged in name order: "a" is charged before "b" refuses."""
    _quota(registry, namespace, "a", {"configmaps": "5"})
    _quota(registry, namespace, "b", {"configmaps": "0"})
    _refused(lambda: registry.create(_rt("configmaps"), namespace, {"metadata": {"name": "c"}}))
    assert _used(registry, namespace, "a") == {"configmaps": "0"}


def test_an_update_refused_by_a_later_quota_takes_back_the_first_charge(registry, namespace) -> None:
    services = _rt("services")
    registry.create(services, namespace, {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}})
    _quota(registry, namespace, "a", {"services.nodeports": "5"})
    _quota(registry, namespace, "b", {"services.nodeports": "0"})
    current = registry.get(services, namespace, "s")
    current["spec"]["type"] = "NodePort"
    _refused(lambda: registry.update(services, namespace, "s", current))
    assert _used(registry, namespace, "a") == {"services.nodeports": "0"}
    assert registry.get(services, namespace, "s")["spec"].get("type", "ClusterIP") == "ClusterIP"
