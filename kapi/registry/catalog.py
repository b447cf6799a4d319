"""The catalog of served resource types, indexed the ways requests look them up.

The catalog knows no kind itself: settings hand them in.
``KAPI_RESOURCE_TYPE_PROVIDERS`` names functions returning fixed
``ResourceType``s (kube's built-in kinds and the virtual reviews in
``kapi.kinds``, the sync's kinds); ``KAPI_CUSTOM_RESOURCE_TYPES`` names a
``CustomTypeSource``: where the objects that define types at run time are
stored (CRDs) and how each becomes types. Custom resources join at run time,
so callers ask ``catalog()`` on every request instead of keeping a reference.

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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kapi.registry.resource import ResourceType

__all__ = [
    "FRESHNESS_SECONDS",
    "Catalog",
    "CustomTypeSource",
    "catalog",
    "invalidate",
    "provided_types",
    "version_priority",
]

FRESHNESS_SECONDS = 1.0
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


@dataclass(frozen=True)
class CustomTypeSource:
    """Resource types defined at run time by stored objects (kube's CRDs): the
    objects of ``resource`` in ``group``, each served as ``types_for(obj)``."""

    group: str
    resource: str
    types_for: Callable[[dict[str, Any]], list[ResourceType]]


def provided_types() -> list[ResourceType]:
    """The fixed types (``KAPI_RESOURCE_TYPE_PROVIDERS``: dotted paths of
    functions returning ``ResourceType``s), in the order the settings name them:
    of two types with the same group, version and plural the earlier is served."""
    from django.conf import settings
    from django.utils.module_loading import import_string

    out: list[ResourceType] = []
    for path in getattr(settings, "KAPI_RESOURCE_TYPE_PROVIDERS", ()):
        out.extend(import_string(path)())
    return out


def _custom_source() -> CustomTypeSource | None:
    """The ``CustomTypeSource`` that ``KAPI_CUSTOM_RESOURCE_TYPES`` names, if any."""
    from django.conf import settings
    from django.utils.module_loading import import_string

    path = getattr(settings, "KAPI_CUSTOM_RESOURCE_TYPES", None)
    return import_string(path) if path else None


class _State:
    """Built on the first ``catalog()`` call, not at import: importing the
    registry must not import the kinds it is handed."""

    def __init__(self) -> None:
        self.fixed = provided_types()
        self.source = _custom_source()
        self.catalog = Catalog(self.fixed)
        self.revision: int | None = None
        self.checked_at = 0.0
        self.lock = threading.Lock()


_state: _State | None = None
_state_lock = threading.Lock()


def _current_state() -> _State:
    global _state
    if _state is None:
        with _state_lock:
            if _state is None:
                _state = _State()
    return _state


def _build(state: _State, source: CustomTypeSource) -> Catalog:
    from kapi.storage import ListQuery, default_storage

    query = ListQuery(group=source.group, resource=source.resource)
    page = default_storage().list(query)
    custom = []
    for definition in page.items:
        try:
            custom.extend(source.types_for(definition))
        except Exception:
            log.exception(
                "cannot serve the types of %s %s",
                source.resource,
                (definition.get("metadata") or {}).get("name"),
            )
    # Custom types come last: one may not shadow a fixed type.
    return Catalog([*state.fixed, *custom])


def _refresh(state: _State) -> None:
    from kapi.storage import default_storage

    source = state.source
    if source is None:
        return
    try:
        storage = default_storage()
        revision = storage.latest_change_revision(source.group, source.resource)
    except Exception:
        log.debug("catalog freshness check failed", exc_info=True)
        return
    if revision == state.revision:
        return
    with state.lock:
        if revision == state.revision:
            return
        state.catalog = _build(state, source)
        state.revision = revision


def invalidate() -> None:
    """Make the next ``catalog()`` check storage (after this process wrote a CRD)."""
    _current_state().checked_at = 0.0


def catalog(fresh: bool = False) -> Catalog:
    """The catalog serving the current request; ``fresh`` checks storage first."""
    state = _current_state()
    now = time.monotonic()
    if fresh or now - state.checked_at > FRESHNESS_SECONDS:
        state.checked_at = now
        _refresh(state)
    return state.catalog
