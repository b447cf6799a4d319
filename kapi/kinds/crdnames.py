"""Which names a CRD may claim: kube's ``NamingConditionController``.

Within one API group, the resource names (plural, singular, short names) and
the kinds (kind, listKind) other CRDs have *accepted* are taken. A CRD keeps
the names it already accepted and gains a requested name only if it is free;
any refused name makes ``NamesAccepted`` False (``PluralConflict``,
``SingularConflict``, ``ShortNamesConflict``, ``KindConflict``,
``ListKindConflict``: ``"x" is already in use``). A CRD is served under its
``status.acceptedNames``; one never established stays unserved until its names
are accepted.

kapi has no controller loop watching CRDs: the CRD strategy computes this on
every write, and ``reconcile_group`` re-runs it for the CRDs of a group that
still wait for a name when another CRD releases names (deleted or renamed).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "NamesResult",
    "all_crds",
    "calculate_names",
    "claimed_names",
    "crds_waiting_for_names",
    "reconcile_waiting",
]

Object = dict[str, Any]
log = logging.getLogger(__name__)
_GROUP = "apiextensions.k8s.io"
_RESOURCE = "customresourcedefinitions"


@dataclass
class NamesResult:
    accepted: dict[str, Any]
    status: str = "True"
    reason: str = "NoConflicts"
    message: str = "no conflicts found"
    problems: list[tuple[str, str]] = field(default_factory=list)


def claimed_names(crds: list[Object], group: str, exclude: str) -> tuple[set, set]:
    """(resource names, kinds) accepted by the CRDs of ``group`` other than ``exclude``."""
    resources: set[str] = set()
    kinds: set[str] = set()
    for crd in crds:
        if (crd.get("spec") or {}).get("group") != group:
            continue
        if (crd.get("metadata") or {}).get("name") == exclude:
            continue
        accepted = (crd.get("status") or {}).get("acceptedNames") or {}
        resources.update(
            n
            for n in (
                accepted.get("plural"),
                accepted.get("singular"),
                *(accepted.get("shortNames") or ()),
            )
            if n
        )
        kinds.update(n for n in (accepted.get("kind"), accepted.get("listKind")) if n)
    return resources, kinds


def _in_use(requested: Any, accepted: Any, used: set[str]) -> str | None:
    if not requested or requested == accepted or requested not in used:
        return None
    return f'"{requested}" is already in use'


def calculate_names(
    requested: dict[str, Any], accepted: dict[str, Any], used: tuple[set, set]
) -> NamesResult:
    """The names a CRD may accept now, and the ``NamesAccepted`` verdict."""
    resources, kinds = used
    # plural and kind are always present, empty until accepted (as kube's JSON).
    result = NamesResult(accepted={"plural": "", "kind": "", **accepted})

    def refuse(reason: str, message: str) -> None:
        result.status, result.reason, result.message = "False", reason, message

    for key, reason, pool in (
        ("plural", "PluralConflict", resources),
        ("singular", "SingularConflict", resources),
    ):
        problem = _in_use(requested.get(key), accepted.get(key), pool)
        if problem:
            refuse(reason, problem)
        elif requested.get(key):
            result.accepted[key] = requested[key]
    short = list(requested.get("shortNames") or ())
    if short != list(accepted.get("shortNames") or ()):
        owned = set(accepted.get("shortNames") or ())
        problems = [
            p
            for name in short
            if name not in owned
            for p in [_in_use(name, "", resources)]
            if p
        ]
        if problems:
            message = problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]"
            refuse("ShortNamesConflict", message)
        elif short:
            result.accepted["shortNames"] = short
        else:
            result.accepted.pop("shortNames", None)
    for key, reason in (("kind", "KindConflict"), ("listKind", "ListKindConflict")):
        problem = _in_use(requested.get(key), accepted.get(key), kinds)
        if problem:
            refuse(reason, problem)
        elif requested.get(key):
            result.accepted[key] = requested[key]
    if requested.get("categories"):
        result.accepted["categories"] = list(requested["categories"])
    else:
        result.accepted.pop("categories", None)
    return result


def all_crds() -> list[Object]:
    from kapi.storage import ListQuery, default_storage

    return default_storage().list(ListQuery(group=_GROUP, resource=_RESOURCE)).items


def crds_waiting_for_names(crds: list[Object]) -> list[str]:
    """Names of CRDs whose requested names are not all accepted yet."""
    out = []
    for crd in crds:
        if (crd.get("metadata") or {}).get("deletionTimestamp"):
            continue
        requested = _normalized((crd.get("spec") or {}).get("names") or {})
        accepted = _normalized((crd.get("status") or {}).get("acceptedNames") or {})
        if requested != accepted:
            out.append(crd["metadata"]["name"])
    return out


def _normalized(names: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in names.items() if v not in (None, "", [])}


def reconcile_waiting(registry=None) -> list[str]:
    """Re-run the naming decision for every CRD still waiting for a name (after
    another CRD released names); the names of those that now have all theirs."""
    from kapi import errors
    from kapi.registry.catalog import catalog
    from kapi.registry.store import Registry

    registry = registry or Registry()
    crd_type = catalog().lookup(_GROUP, "v1", _RESOURCE)
    settled = []
    for name in crds_waiting_for_names(all_crds()):
        try:
            updated = registry.update_with(crd_type, "", name, lambda obj: obj)
        except errors.StatusError as exc:
            # Gone, changed meanwhile (next pass) or no longer valid: skip it.
            if exc.code not in (404, 409):
                log.warning("cannot reconsider the names of CRD %s: %s", name, exc)
            continue
        if not crds_waiting_for_names([updated]):
            settled.append(name)
    return settled
