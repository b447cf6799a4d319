"""HTTP to a Sync's target API server, one shared client per target.

``client_for(target)`` returns the client of a target (server and
credentials, ``sync.kubeconfig``): every Sync using the same kubeconfig in a
process shares its connection pool and discovery cache; a client no Sync
used for ``IDLE_SECONDS`` is dropped (its connections closed).

Every request has connect and read timeouts (``KAPI_SYNC_REMOTE_CONNECT_TIMEOUT``,
``KAPI_SYNC_REMOTE_READ_TIMEOUT``) and no retries, so a slow or dead target
delays only its own Syncs. A target's error answers raise ``StatusError``
with the target's own ``Status``; a target that cannot be reached raises a
503 ``ServiceUnavailable`` naming it.

TLS: the CA and client certificate come from the kubeconfig's inline data.
Python's ``ssl`` loads a certificate chain only from a path, so the client
certificate and key go to an anonymous in-memory file (``memfd_create``)
read through ``/proc/self/fd`` and closed at once: never a file on disk.
"""

from __future__ import annotations

import json
import os
import ssl
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlencode

import urllib3
from django.conf import settings

from kapi import errors
from sync.kubeconfig import KubeconfigError, Target

__all__ = ["Client", "RemoteType", "client_for", "drop_idle", "unreachable"]

IDLE_SECONDS = 600.0
VERSION_SECONDS = 300.0
#: A discovery miss (a CRD just created) is asked again at most this often.
_DISCOVERY_RETRY = 1.0


@dataclass(frozen=True)
class RemoteType:
    """A resource type as the target's discovery serves it."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def unreachable(server: str, reason: str) -> errors.StatusError:
    return errors.StatusError(errors.status_failure(
        503, "ServiceUnavailable", f"target {server} cannot be reached: {reason}"))


def _ssl_context(target: Target) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if target.ca_pem:
        context.load_verify_locations(cadata=target.ca_pem.decode(errors="replace"))
    if target.insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if target.cert_pem:
        fd = os.memfd_create("kapi-sync-client-cert", os.MFD_CLOEXEC)
        try:
            os.write(fd, target.cert_pem + b"\n" + target.key_pem)
            context.load_cert_chain(f"/proc/self/fd/{fd}")
        except (ssl.SSLError, OSError) as exc:
            raise KubeconfigError(f"kubeconfig client certificate cannot be used: {exc.__class__.__name__}") \
                from None
        finally:
            os.close(fd)
    return context


class Client:
    """Requests to one target; thread-safe (urllib3's pool)."""

    def __init__(self, target: Target) -> None:
        self.server = target.server
        self.used = time.monotonic()
        headers = {"Accept": "application/json", "User-Agent": "kapi-sync"}
        if target.token:
            headers["Authorization"] = f"Bearer {target.token}"
        elif target.username:
            headers.update(urllib3.util.make_headers(basic_auth=f"{target.username}:{target.password}"))
        self._headers = headers
        kwargs = {"ssl_context": _ssl_context(target)} if target.server.startswith("https:") else {}
        self._pool = urllib3.PoolManager(
            num_pools=2, maxsize=8, retries=False,
            timeout=urllib3.Timeout(connect=settings.KAPI_SYNC_REMOTE_CONNECT_TIMEOUT,
                                    read=settings.KAPI_SYNC_REMOTE_READ_TIMEOUT),
            **kwargs)
        self._discovery: dict[str, tuple[float, dict[str, RemoteType]]] = {}
        self._lock = threading.Lock()
        self._version: tuple[float, str] | None = None

    def close(self) -> None:
        self._pool.clear()

    def request(self, method: str, path: str, *, query: dict | None = None, body: bytes | None = None,
                content_type: str = "application/json", impersonate: str = "",
                timeout: float | None = None, stream: bool = False):
        """The decoded JSON answer (or the raw response, ``stream``)."""
        self.used = time.monotonic()
        url = self.server + path + (("?" + urlencode(query)) if query else "")
        headers = dict(self._headers)
        if body is not None:
            headers["Content-Type"] = content_type
        if impersonate:
            headers["Impersonate-User"] = impersonate
        kwargs = {}
        if timeout is not None:
            kwargs["timeout"] = urllib3.Timeout(connect=settings.KAPI_SYNC_REMOTE_CONNECT_TIMEOUT, read=timeout)
        try:
            response = self._pool.request(method, url, body=body, headers=headers, redirect=False,
                                          preload_content=not stream, **kwargs)
        except urllib3.exceptions.HTTPError as exc:
            raise unreachable(self.server, _reason(exc)) from None
        if stream and response.status < 400:
            return response
        data = response.data if not stream else response.read()
        try:
            decoded = json.loads(data) if data else {}
        except ValueError:
            decoded = {}
        if response.status >= 400:
            if isinstance(decoded, dict) and decoded.get("kind") == "Status":
                decoded.setdefault("code", response.status)
                raise errors.StatusError(decoded)
            raise errors.StatusError(errors.status_failure(
                response.status, "InternalError" if response.status >= 500 else "BadRequest",
                f"target {self.server} answered {response.status} to {method} {path}"))
        return decoded

    def version(self) -> str:
        """The target's ``gitVersion``, asked again at most every ``VERSION_SECONDS``."""
        now = time.monotonic()
        if self._version is None or now - self._version[0] > VERSION_SECONDS:
            self._version = (now, str(self.request("GET", "/version").get("gitVersion", "")))
        return self._version[1]

    def resource(self, group: str, version: str, kind: str) -> RemoteType | None:
        """The served type of ``kind`` in ``group/version`` (discovery, cached;
        a miss is asked again, so a CRD the Sync just created is found)."""
        gv = f"{group}/{version}" if group else version
        with self._lock:
            cached = self._discovery.get(gv)
        if cached is None or (kind not in cached[1] and time.monotonic() - cached[0] > _DISCOVERY_RETRY):
            path = f"/apis/{gv}" if group else f"/api/{version}"
            try:
                listing = self.request("GET", path)
            except errors.StatusError as exc:
                if exc.code != 404:
                    raise
                listing = {}
            kinds = {}
            for res in listing.get("resources") or []:
                if "/" in res.get("name", ""):
                    continue  # a subresource
                kinds[res["kind"]] = RemoteType(group, version, res["kind"], res["name"],
                                                bool(res.get("namespaced")))
            cached = (time.monotonic(), kinds)
            with self._lock:
                self._discovery[gv] = cached
        return cached[1].get(kind)

    def type_of_kind(self, group: str, kind: str, version: str) -> RemoteType | None:
        """``kind`` of ``group`` in ``version`` (an inventory entry's)."""
        return self.resource(group, version, kind)


def _reason(exc: Exception) -> str:
    inner = getattr(exc, "reason", None)
    text = str(inner or exc)
    # urllib3 wraps the socket error in a message naming the pool object.
    return text.split(": ", 1)[-1] if "Pool(" in text else text


_clients: dict[str, Client] = {}
_clients_lock = threading.Lock()


def client_for(target: Target) -> Client:
    """The shared client of ``target`` (created on first use)."""
    drop_idle()
    key = target.digest
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            client = _clients[key] = Client(target)
        client.used = time.monotonic()
        return client


def drop_idle(now: float | None = None) -> int:
    """Close and forget the clients no Sync used for ``IDLE_SECONDS``."""
    now = time.monotonic() if now is None else now
    with _clients_lock:
        idle = [k for k, c in _clients.items() if now - c.used > IDLE_SECONDS]
        for key in idle:
            _clients.pop(key).close()
    return len(idle)
