"""Drift on a remote target in seconds: watches of the objects Syncs applied there.

kapi's own objects reach the sync through its change log (``sync.changes``);
a target's do not, so after each pass of a Sync with ``spec.kubeConfig`` the
worker that ran it ``ensure``\\s one watch per (target, identity, type,
namespace) of the Sync's inventory: label-selected (``sync.kapi.dev/name``),
started from a list's resourceVersion, resumed from the last seen one, and
re-listed on 410 Gone (then every Sync of the watch gets a full pass: what
changed in the gap is unknown). An object deleted, or changed by a manager
other than ``kapi-sync`` (``sync.changes.drifted``), requests a drift pass of
its owning Sync, which re-applies only what drifted.

Watches are shared by every Sync of the process that uses the same target,
identity, type and namespace; ``release`` (a Sync deleted, moved to another
target, an inventory without that type) drops a Sync from them, and a watch
no Sync uses stops. A watch blocks on its socket between events: an idle
target costs no CPU; a dead one is retried with backoff (up to a minute).

A Sync's passes run in whichever Celery pool process is free, so several
processes may each hold watches for it, and only the one that runs a Sync's
last pass releases them there. So every process with watches also checks,
every ``CHECK_SECONDS``, that each of its Syncs still exists and still
applies with the configuration its watches were made for (``fingerprint``:
the Sync's uid, ``kubeConfig``, ``serviceAccountName`` and the kubeconfig
Secret's resourceVersion); it releases the ones that do not, which ends a
deleted or retargeted Sync's watches, and their hold on the old credentials,
in every process.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time

from kapi import errors
from sync import apply as engine
from sync import controllers
from sync.changes import drifted, owning_sync
from sync.kinds import LABEL_NAME, sync_type
from sync.remoteapply import RemoteEngine, object_path

__all__ = ["active", "ensure", "fingerprint", "release"]

log = logging.getLogger(__name__)

#: The server ends each watch request after this long (a fresh one follows).
WATCH_SECONDS = 290
BACKOFF_MAX = 60.0
#: Seconds between a process's checks that its watches' Syncs still want them.
CHECK_SECONDS = float(os.environ.get("KAPI_SYNC_REMOTE_WATCH_CHECK_SECONDS", "10"))

SyncKey = tuple[str, str]
#: What a Sync's watches were made for (``fingerprint``).
Fingerprint = tuple[str, str, str, str]


class _Watch:
    """One watch request loop, and the Syncs it reports drift to."""

    def __init__(self, remote: RemoteEngine, rt, namespace: str) -> None:
        self.remote, self.rt, self.namespace = remote, rt, namespace
        self.path = object_path(rt, namespace)
        #: The Syncs it reports drift to, and the fingerprint each was ensured with.
        self.syncs: dict[SyncKey, Fingerprint] = {}
        self.stopped = threading.Event()
        self._response = None
        self.thread = threading.Thread(target=self._run, daemon=True,
                                       name=f"sync-watch {remote.server}{self.path}")

    def stop(self) -> None:
        self.stopped.set()
        response = self._response
        if response is not None:
            try:
                response.shutdown()
            except Exception:  # an already closed stream
                pass

    def _request_drift(self, keys) -> None:
        from django.db import connection

        from kapi.controllers import wakeup

        runs = [(controllers.SYNC, ns, name, "drift", True, None) for ns, name in keys]
        try:
            if runs and controllers.request_all(runs):
                wakeup.wake_workers()
        finally:
            connection.close()  # a watch thread holds no database connection between events

    def _list_version(self) -> str:
        listed = self.remote.client.request("GET", self.path, query={"labelSelector": LABEL_NAME, "limit": "1"},
                                            impersonate=self.remote.impersonate)
        return str((listed.get("metadata") or {}).get("resourceVersion") or "")

    def _run(self) -> None:
        version, backoff, relisted = "", 1.0, False
        while not self.stopped.is_set():
            try:
                if not version:
                    version = self._list_version()
                    if relisted:  # what changed in the gap is unknown: a full pass each
                        self._request_drift(set(self.syncs))
                    relisted = True
                version = self._follow(version)
                backoff = 1.0
            except errors.StatusError as exc:
                if exc.code == 410:
                    version = ""
                    continue
                log.info("watch of %s%s: %s", self.remote.server, self.path, exc.status.get("message"))
                self.stopped.wait(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX)
            except Exception as exc:  # a broken stream: resume from the last version
                log.info("watch of %s%s ended: %s", self.remote.server, self.path, type(exc).__name__)
                self.stopped.wait(backoff)
                backoff = min(backoff * 2, BACKOFF_MAX)

    def _follow(self, version: str) -> str:
        """One watch request from ``version``; returns the last version seen ("" after a 410)."""
        query = {"watch": "true", "labelSelector": LABEL_NAME, "resourceVersion": version,
                 "allowWatchBookmarks": "true", "timeoutSeconds": str(WATCH_SECONDS)}
        response = self.remote.client.request("GET", self.path, query=query, impersonate=self.remote.impersonate,
                                              timeout=WATCH_SECONDS + 30, stream=True)
        self._response = response
        try:
            buffer = b""
            for chunk in response.stream(65536):
                if self.stopped.is_set():
                    break
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    if line.strip():
                        version = self._event(json.loads(line), version)
                        if not version:
                            return ""
        finally:
            self._response = None
            response.release_conn()
        return version

    def _event(self, event: dict, version: str) -> str:
        obj = event.get("object") or {}
        if event.get("type") == "ERROR":
            if obj.get("code") == 410:
                return ""
            raise errors.StatusError(obj if obj.get("kind") == "Status" else errors.status_failure(
                500, "InternalError", "watch error"))
        meta = obj.get("metadata") or {}
        kind = event.get("type")
        if kind in ("MODIFIED", "DELETED"):
            owner = owning_sync(meta)
            if owner in self.syncs and drifted(meta, kind == "DELETED"):
                self._request_drift([owner])
        return str(meta.get("resourceVersion") or version)


_watches: dict[tuple, _Watch] = {}
_lock = threading.Lock()


def _watch_key(remote: RemoteEngine, rt, namespace: str) -> tuple:
    return (id(remote.client), remote.impersonate, rt.group, rt.version, rt.plural, namespace)


def fingerprint(registry, sync: dict) -> Fingerprint:
    """What a Sync's watches depend on: its uid, ``spec.kubeConfig``,
    ``spec.serviceAccountName`` and its kubeconfig Secret's resourceVersion."""
    from kapi.registry.catalog import catalog

    meta, spec = sync["metadata"], sync.get("spec") or {}
    kubeconfig = spec.get("kubeConfig") or {}
    secret = str((kubeconfig.get("secretRef") or {}).get("name") or "")
    version = ""
    if secret:
        try:
            found = registry.get(catalog().lookup("", "v1", "secrets"), meta["namespace"], secret)
            version = str(found["metadata"].get("resourceVersion") or "")
        except errors.StatusError:
            version = "absent"
    return (str(meta.get("uid") or ""), json.dumps(kubeconfig, sort_keys=True),
            str(spec.get("serviceAccountName") or ""), version)


def ensure(remote: RemoteEngine, sync: SyncKey, inventory: list[dict], made_for: Fingerprint) -> None:
    """Watch the types and namespaces of ``inventory`` on the target for ``sync``
    (and nothing else for it); ``made_for`` is the Sync's ``fingerprint``."""
    wanted: dict[tuple, tuple] = {}
    for item in inventory:
        try:
            namespace, _, group, kind, version = engine.parse_id(item)
        except ValueError:
            continue
        try:
            rt = remote.client.resource(group, version, kind)
        except errors.StatusError:
            continue
        if rt is not None:
            ns = namespace if rt.namespaced else ""
            wanted[_watch_key(remote, rt, ns)] = (rt, ns)
    stopping = []
    with _lock:
        for key, watch in list(_watches.items()):
            if key not in wanted and sync in watch.syncs:
                del watch.syncs[sync]
                if not watch.syncs:
                    stopping.append(_watches.pop(key))
        for key, (rt, ns) in wanted.items():
            watch = _watches.get(key)
            if watch is None:
                watch = _watches[key] = _Watch(remote, rt, ns)
                watch.thread.start()
            watch.syncs[sync] = made_for
        if _watches:
            _checker.start()
    for watch in stopping:
        watch.stop()


def release(sync: SyncKey, made_for: Fingerprint | None = None) -> None:
    """``sync`` watches nothing any more (deleted, or applying elsewhere); with
    ``made_for``, only the watches ensured with that fingerprint."""
    stopping = []
    with _lock:
        for key, watch in list(_watches.items()):
            if sync in watch.syncs and made_for in (None, watch.syncs[sync]):
                del watch.syncs[sync]
                if not watch.syncs:
                    stopping.append(_watches.pop(key))
    for watch in stopping:
        watch.stop()


def _stale() -> list[tuple[SyncKey, Fingerprint]]:
    """This process's (Sync, fingerprint) pairs that the Sync no longer matches."""
    from django.db import connection

    from kapi.registry.store import Registry

    with _lock:
        held = {(sync, made_for) for watch in _watches.values() for sync, made_for in watch.syncs.items()}
    registry = Registry()
    stale = []
    try:
        for (namespace, name), made_for in held:
            try:
                sync = registry.get(sync_type(), namespace, name)
            except errors.StatusError as exc:
                if exc.code == 404:
                    stale.append(((namespace, name), made_for))
                continue
            if sync["metadata"].get("deletionTimestamp") or fingerprint(registry, sync) != made_for:
                stale.append(((namespace, name), made_for))
    finally:
        connection.close()  # the checker holds no database connection between checks
    return stale


class _Checker:
    """One thread per process while it holds watches: every ``CHECK_SECONDS``
    releases what ``_stale`` finds. Started by ``ensure``; ends with the last watch."""

    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._pid = 0

    def start(self) -> None:  # under _lock
        if self._thread is not None and self._thread.is_alive() and self._pid == os.getpid():
            return
        self._pid = os.getpid()
        self._thread = threading.Thread(target=self._run, daemon=True, name="sync-watch-check")
        self._thread.start()

    def _run(self) -> None:
        while True:
            time.sleep(CHECK_SECONDS)
            with _lock:
                if not _watches:
                    self._thread = None
                    return
            try:
                for sync, made_for in _stale():
                    release(sync, made_for)
            except Exception:  # the database away: check again next time
                log.info("checking the remote watches' Syncs failed", exc_info=True)


_checker = _Checker()


def active() -> int:
    """How many watches run in this process."""
    with _lock:
        return len(_watches)
