"""Watch revocation: an open watch sends an event only while its caller may
still see it, judged on a state of authentication and RBAC at least as new as
the event.

kube-apiserver authorizes a watch once, when it starts. kapi promises more:
when a permission goes, the watch ends before it delivers anything the caller
may no longer see, whichever API process serves it and whichever wrote the
revocation. The ways a permission goes, and how each process learns of it in
the order of the events it sends:

=====================================================  =============================
revocation                                             seen through
=====================================================  =============================
(Cluster)RoleBinding deleted or edited, (Cluster)Role  the watch cache's channels of
rules edited, aggregation shrinking a ClusterRole's    the four RBAC resources
rules (its ``.rules`` are rewritten)
ServiceAccount deleted, a bound token's Pod, Secret    DELETED events in the watch
or Node deleted                                        cache's channels of those
Django user deactivated, deleted or regrouped          ``kapi_auth_generation``, read
                                                       after the event was published
signing key retired, token file edited                 the files' stamps, read after
                                                       the event was published
=====================================================  =============================

The watch cache publishes changes in version order, and a change is published
only once every lower version has committed. So when a watcher holds an event,
every RBAC (or ServiceAccount...) change below it is already in its channel:
a :class:`Monitor` (one per process) sums it up as a *state* (channel ends, a
count of identity deletions, file stamps, the Django generation), cheap to
compare. A :class:`Guard` (one per watch) remembers the state its caller was
last authorized against; before each event it compares that with the state
now (a tuple comparison), and only when they differ re-authenticates the
token and re-authorizes the request on a fresh RBAC index (``recheck``, in a
worker thread, reading the database after the state was taken, so the answer
covers it). Watchers sharing credentials share one recheck per state. No
revocation, no query; a revocation costs one recheck per distinct caller and
process, not one per event and watcher.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
from collections.abc import Mapping

from kapi import errors
from kapi.auth import djangousers, rbac
from kapi.auth.attributes import Attributes
from kapi.auth.user import SYSTEM_MASTERS, UserInfo, parse_service_account

__all__ = ["Credentials", "Guard", "Monitor", "monitor", "recheck"]

log = logging.getLogger(__name__)

RBAC_RESOURCES = ("roles", "clusterroles", "rolebindings", "clusterrolebindings")
#: Where a ServiceAccount token's identity lives: the account, and the kinds a
#: token may be bound to (``user.extra`` key prefix -> stored resource).
_BOUND = {"pod": "pods", "secret": "secrets", "node": "nodes"}
_IMPERSONATE = "HTTP_IMPERSONATE_"
_MAX_CHECKS = 4096


@dataclasses.dataclass(frozen=True)
class Credentials:
    """What a watch was allowed with: the bearer token (None: nothing to
    re-authenticate), the impersonation headers, and the request's authorizer
    attributes (their user is the effective user when it started)."""

    token: str | None
    impersonation: tuple[tuple[str, str], ...]
    attrs: Attributes
    #: "static" (token file), "serviceaccount", "django" or "" (no token).
    kind: str = ""
    #: Stored resources (core group) whose deletion ends a ServiceAccount token.
    identity: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        requester: UserInfo,
        token: str | None,
        meta: Mapping[str, str],
        attrs: Attributes,
    ) -> Credentials:
        impersonation = tuple(
            sorted((k, v) for k, v in meta.items() if k.startswith(_IMPERSONATE))
        )
        kind, identity = "", ()
        if token:
            if requester.uid.startswith("django:"):
                kind = "django"
            elif parse_service_account(requester.username) and requester.uid:
                kind = "serviceaccount"
                identity = ("serviceaccounts",) + tuple(
                    plural
                    for key, plural in _BOUND.items()
                    if f"authentication.kubernetes.io/{key}-name" in requester.extra
                )
            else:
                kind = "static"
        return cls(token, impersonation, attrs, kind, identity)


def recheck(creds: Credentials) -> bool:
    """Whether the caller may still make its request, on the state committed
    now: the token authenticates again (its ServiceAccount, bound object,
    signing key, Django user or token-file line still there), impersonation is
    still allowed, and RBAC (a fresh index) allows the effective user. Blocking
    (database); gives the thread's connection back."""
    from django.db import connection

    from kapi.auth.authenticator import authenticate_token
    from kapi.auth.impersonation import impersonate
    from kapi.runtime import tokens

    policy: list[rbac.PolicyIndex] = []

    def allowed(attrs: Attributes) -> bool:
        if SYSTEM_MASTERS in attrs.user.groups:
            return True
        if not policy:
            policy.append(rbac.index(fresh=True))
        return rbac.authorize(attrs, policy[0]).allowed

    try:
        user = creds.attrs.user
        if creds.token is not None:
            if creds.kind == "django":
                djangousers.invalidate()  # read the generation now, not 0.25 s ago
            else:
                tokens.invalidate()  # look at the token file now, not 0.25 s ago
            requester = authenticate_token(creds.token)
            if requester is None:
                return False
            try:
                impersonated = impersonate(
                    requester, dict(creds.impersonation), allowed
                )
            except errors.StatusError:
                return False
            user = impersonated or requester
        return allowed(dataclasses.replace(creds.attrs, user=user))
    finally:
        connection.close()


def _file_stamp() -> tuple:
    """The signing keys' and the token file's names and mtimes: retiring a key
    or editing the token file changes it. Asked once per cache revision (every
    write, under load)."""
    from kapi.auth import signing
    from kapi.runtime import tokens

    out: list = []
    try:
        out.extend(signing.key_stamps())
    except OSError:
        out.append(None)
    try:
        st = os.stat(tokens.token_file_path())
        out.append((st.st_mtime_ns, st.st_size, st.st_ino))
    except OSError:
        out.append(None)
    return tuple(out)


def _read_generation() -> int:
    from django.db import connection

    try:
        with connection.cursor() as cur:
            cur.execute("SELECT generation FROM kapi_auth_generation WHERE id = 1")
            row = cur.fetchone()
        return int(row[0]) if row else 0
    finally:
        connection.close()


class Monitor:
    """One process's view of what could revoke a watch (see the module
    docstring). Made on the event loop after the watch cache started, so its
    channels start at the cache's revision and miss nothing after it."""

    def __init__(self, cache) -> None:
        self.cache = cache
        self.rbac = [cache.channel(rbac.RBAC_GROUP, r) for r in RBAC_RESOURCES]
        #: stored resource -> [channel, next position to scan]
        self.identity: dict[str, list] = {}
        self.deletions = 0
        self._at = -1  # the cache revision the memo below is for
        self._memo: tuple = ()
        self._generation: tuple[int, int] = (-1, 0)  # (covers revision, value)
        self._probe: tuple[int, asyncio.Future] | None = None
        self._checks: dict = {}
        self._checks_state: tuple | None = None

    def watch_identity(self, resources: tuple[str, ...]) -> None:
        """Follow deletions of these core resources from now on."""
        for plural in resources:
            if plural not in self.identity:
                channel = self.cache.channel("", plural)
                self.identity[plural] = [channel, channel.end]

    def _scan(self) -> int:
        for entry in self.identity.values():
            channel, position = entry
            if position == channel.end:
                continue
            events = channel.since(position)
            # Trimmed or reset past what we scanned: assume the worst.
            if events is None or any(e.type == "DELETED" for e in events):
                self.deletions += 1
            entry[1] = channel.end
        return self.deletions

    def _base(self) -> tuple:
        """(RBAC channel ends, identity deletions, file stamps), computed once
        per cache revision: every change at or below it is in the channels."""
        at = self.cache.revision
        if at != self._at:
            self._at = at
            self._memo = (sum(c.end for c in self.rbac), self._scan(), _file_stamp())
        return self._memo

    async def _django_generation(self) -> int:
        """The Django generation as read after everything published so far
        (one read per cache revision, shared by every watcher)."""
        at = self.cache.revision
        covered, value = self._generation
        if covered >= at:
            return value
        probe = self._probe
        if probe is None or probe[0] < at or probe[1].done():
            future = asyncio.ensure_future(asyncio.to_thread(_read_generation))
            probe = self._probe = (at, future)
        value = await asyncio.shield(probe[1])
        if probe[0] > self._generation[0]:
            self._generation = (probe[0], value)
        return value

    def state_now(self, creds: Credentials) -> tuple | None:
        """What ``creds``' authorization depends on, as of every change
        published so far; None when that needs a database read first
        (``state``)."""
        generation = None
        if creds.kind == "django":
            covered, generation = self._generation
            if covered < self.cache.revision:
                return None
        return self._state(creds, generation)

    async def state(self, creds: Credentials) -> tuple:
        """``state_now``, reading the Django generation first if needed (it
        then covers every change published when this was called)."""
        generation = await self._django_generation() if creds.kind == "django" else None
        return self._state(creds, generation)

    def _state(self, creds: Credentials, generation) -> tuple:
        """The parts of the published state that ``creds`` depend on."""
        rbac_end, deletions, files = self._base()
        return (
            rbac_end,
            deletions if creds.identity else None,
            files if creds.token is not None else None,
            generation,
        )

    async def check(self, state: tuple, creds: Credentials) -> bool:
        """``recheck(creds)``, shared by the watchers asking at the same state."""
        if state != self._checks_state or len(self._checks) > _MAX_CHECKS:
            self._checks, self._checks_state = {}, state
        future = self._checks.get(creds)
        if future is None:
            future = self._checks[creds] = asyncio.ensure_future(
                asyncio.to_thread(recheck, creds)
            )
        try:
            return await asyncio.shield(future)
        except Exception:
            log.warning("kapi: could not re-check a watch's permission", exc_info=True)
            self._checks.pop(creds, None)
            return False


_monitors: dict[int, Monitor] = {}


def monitor(cache) -> Monitor:
    """The monitor of ``cache`` (one per process); ``cache`` must have started."""
    found = _monitors.get(id(cache))
    if found is None or found.cache is not cache:
        found = _monitors[id(cache)] = Monitor(cache)
    return found


class Guard:
    """One watch's permission: ``await guard.allowed()`` before each event."""

    def __init__(self, monitor: Monitor, creds: Credentials) -> None:
        self.monitor = monitor
        self.creds = creds
        monitor.watch_identity(creds.identity)
        self._state: tuple | None = None

    def unchanged(self) -> bool:
        """True when nothing the caller's permission depends on changed since
        it was last checked (no await: the per-event fast path)."""
        return (
            self._state is not None
            and self.monitor.state_now(self.creds) == self._state
        )

    async def allowed(self) -> bool:
        """True while the caller may still see what has been published so far;
        once False, the watch must end without sending anything more."""
        state = await self.monitor.state(self.creds)
        if state == self._state:
            return True
        if not await self.monitor.check(state, self.creds):
            return False
        self._state = state
        return True
