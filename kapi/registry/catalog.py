"""The catalog of served resource types, indexed the ways requests look them up.

Built-in types are fixed; custom resources join at run time (CRDs), so callers
ask ``catalog()`` on every request instead of keeping a reference.

Every API server process and worker keeps its own catalog, correct because
CRDs are objects in the same storage: the catalog remembers the newest change
to ``customresourcedefinitions`` it was built at and rebuilds when storage has a
newer one. ``catalog()`` checks that at most every ``FRESHNESS_SECONDS``;
``catalog(fresh=True)`` always does (before a 404 for an unknown resource, on
discovery, and before writing a custom resource, so schema changes take effect
at once in every process).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable

from kapi.registry.builtin import BUILTIN_TYPES
from kapi.registry.resource import ResourceType
from kapi.registry.virtual import VIRTUAL_TYPES

__all__ = ["FRESHNESS_SECONDS", "Catalog", "catalog", "extension_types", "invalidate"]

FRESHNESS_SECONDS = 1.0
_CRD_GROUP = "apiextensions.k8s.io"
_CRD_RESOURCE = "customresourcedefinitions"
log = logging.getLogger(__name__)

#: Preferred order of groups in discovery, as kube-apiserver orders them.
_GROUP_ORDER = (
    "",
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "resource.k8s.io",
)


_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple:
    """Sort key putting kube's preferred versions first: GA, then beta, then alpha,
    higher numbers first, then anything else alphabetically."""
    match = _VERSION.match(version)
    if match is None:
        return (3, 0, 0, version)
    major, stage, minor = match.groups()
    rank = {None: 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -int(major), -int(minor or 0), version)


class Catalog:
    def __init__(self, types: Iterable[ResourceType]) -> None:
        self._types = list(types)
        self._by_gvr: dict[tuple[str, str, str], ResourceType] = {}
        self._groups: OrderedDict[str, list[str]] = OrderedDict()
        order = {g: i for i, g in enumerate(_GROUP_ORDER)}
        for rt in sorted(
            self._types, key=lambda t: (order.get(t.group, len(order)), t.group)
        ):
            if (rt.group, rt.version, rt.plural) in self._by_gvr:
                continue  # a CRD may not shadow a built-in type
            self._by_gvr[(rt.group, rt.version, rt.plural)] = rt
            versions = self._groups.setdefault(rt.group, [])
            if rt.version not in versions:
                versions.append(rt.version)
        kept = set(map(id, self._by_gvr.values()))
        self._types = [t for t in self._types if id(t) in kept]
        for versions in self._groups.values():
            versions.sort(key=version_priority)

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_gvr.get((group, version, plural))

    def types(self) -> list[ResourceType]:
        return list(self._types)

    def groups(self) -> list[tuple[str, list[str]]]:
        """(group, versions with the preferred first) in discovery order; core first."""
        return [(g, list(v)) for g, v in self._groups.items()]

    def has_group_version(self, group: str, version: str) -> bool:
        return version in self._groups.get(group, [])

    def resources(self, group: str, version: str) -> list[ResourceType]:
        return [t for t in self._types if t.group == group and t.version == version]

    def for_kind(self, group: str, version: str, kind: str) -> ResourceType | None:
        for t in self._types:
            if t.group == group and t.version == version and t.kind == kind:
                return t
        return None


def extension_types() -> list[ResourceType]:
    """Types served by installed apps (``KAPI_RESOURCE_TYPE_PROVIDERS``: dotted
    paths of functions returning ``ResourceType``s), e.g. ``sync.kapi.dev``."""
    from django.conf import settings
    from django.utils.module_loading import import_string

    out: list[ResourceType] = []
    for path in getattr(settings, "KAPI_RESOURCE_TYPE_PROVIDERS", ()):
        out.extend(import_string(path)())
    return out


class _State:
    def __init__(self) -> None:
        self.catalog = Catalog([*BUILTIN_TYPES, *VIRTUAL_TYPES, *extension_types()])
        self.revision: int | None = None
        self.checked_at = 0.0
        self.lock = threading.Lock()


_state = _State()


def _latest_crd_revision() -> int:
    from kapi.storage import default_storage

    return default_storage().latest_change_revision(_CRD_GROUP, _CRD_RESOURCE)


def _build() -> Catalog:
    from kapi.registry.custom import types_for_crd
    from kapi.storage import ListQuery, default_storage

    page = default_storage().list(ListQuery(group=_CRD_GROUP, resource=_CRD_RESOURCE))
    custom = []
    for crd in page.items:
        try:
            custom.extend(types_for_crd(crd))
        except Exception:
            log.exception(
                "cannot serve CRD %s", (crd.get("metadata") or {}).get("name")
            )
    return Catalog([*BUILTIN_TYPES, *VIRTUAL_TYPES, *extension_types(), *custom])


def _refresh() -> None:
    try:
        revision = _latest_crd_revision()
    except Exception:
        log.debug("catalog freshness check failed", exc_info=True)
        return
    if revision == _state.revision:
        return
    with _state.lock:
        if revision == _state.revision:
            return
        _state.catalog = _build()
        _state.revision = revision


def invalidate() -> None:
    """Make the next ``catalog()`` check storage (after this process wrote a CRD)."""
    _state.checked_at = 0.0


def catalog(fresh: bool = False) -> Catalog:
    """The catalog serving the current request; ``fresh`` checks storage first."""
    now = time.monotonic()
    if fresh or now - _state.checked_at > FRESHNESS_SECONDS:
        _state.checked_at = now
        _refresh()
    return _state.catalog
