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
"""

from __future__ import annotations

import json
import logging
import threading

from kapi import errors
from sync import apply as engine
from sync import controllers
from sync.changes import drifted, owning_sync
from sync.kinds import LABEL_NAME
from sync.remoteapply import RemoteEngine, object_path

__all__ = ["active", "ensure", "release"]

log = logging.getLogger(__name__)

#: The server ends each watch request after this long (a fresh one follows).
WATCH_SECONDS = 290
BACKOFF_MAX = 60.0

SyncKey = tuple[str, str]


class _Watch:
    """One watch request loop, and the Syncs it reports drift to."""

    def __init__(self, remote: RemoteEngine, rt, namespace: str) -> None:
        self.remote, self.rt, self.namespace = remote, rt, namespace
        self.path = object_path(rt, namespace)
        self.syncs: set[SyncKey] = set()
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


def ensure(remote: RemoteEngine, sync: SyncKey, inventory: list[dict]) -> None:
    """Watch the types and namespaces of ``inventory`` on the target for ``sync``
    (and nothing else for it)."""
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
                watch.syncs.discard(sync)
                if not watch.syncs:
                    stopping.append(_watches.pop(key))
        for key, (rt, ns) in wanted.items():
            watch = _watches.get(key)
            if watch is None:
                watch = _watches[key] = _Watch(remote, rt, ns)
                watch.thread.start()
            watch.syncs.add(sync)
    for watch in stopping:
        watch.stop()


def release(sync: SyncKey) -> None:
    """``sync`` watches nothing any more (deleted, or applying elsewhere)."""
    stopping = []
    with _lock:
        for key, watch in list(_watches.items()):
            watch.syncs.discard(sync)
            if not watch.syncs:
                stopping.append(_watches.pop(key))
    for watch in stopping:
        watch.stop()


def active() -> int:
    """How many watches run in this process."""
    with _lock:
        return len(_watches)
