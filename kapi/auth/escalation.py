"""Escalation prevention (kube's ``pkg/registry/rbac`` policybased storage).

Nobody may create or change a Role/ClusterRole granting rules they do not hold
(unless allowed to ``escalate`` on it), nor a RoleBinding/ClusterRoleBinding to a
role whose rules they do not hold (unless allowed to ``bind`` that role).
``admission_for(user)`` returns the check a ``Registry`` runs on each new
object before it is stored.
"""

from __future__ import annotations

from collections.abc import Callable

from kapi import errors
from kapi.auth import rbac
from kapi.auth.attributes import Attributes
from kapi.auth.rules import compact_string, covers
from kapi.auth.user import UserInfo

__all__ = ["admission_for", "check_no_escalation"]

_KINDS = {
    "Role": "roles",
    "ClusterRole": "clusterroles",
    "RoleBinding": "rolebindings",
    "ClusterRoleBinding": "clusterrolebindings",
}


_FULL_AUTHORITY = [
    {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
    {"nonResourceURLs": ["*"], "verbs": ["*"]},
]


def _go_groups(groups: tuple[str, ...]) -> str:
    return "[" + " ".join(f'"{g}"' for g in groups) + "]"


def _refuse(
    user: UserInfo, plural: str, name: str, missing: list[dict]
) -> errors.StatusError:
    message = (
        f'user "{user.username}" (groups={_go_groups(user.groups)}) is attempting to grant RBAC '
        f"permissions not currently held:\n{compact_string(missing)}"
    )
    return errors.forbidden(rbac.RBAC_GROUP, plural, name, message)


def _allowed(user: UserInfo, verb: str, plural: str, namespace: str, name: str) -> bool:
    attrs = Attributes(
        user, verb, True, namespace, rbac.RBAC_GROUP, "v1", plural, "", name
    )
    return rbac.authorize(attrs).allowed


def _role_rules(obj: dict, namespace: str) -> list[dict]:
    """The rules a binding's roleRef grants (empty when the role is missing)."""
    from kapi.registry.catalog import catalog
    from kapi.registry.store import Registry

    ref = obj.get("roleRef") or {}
    registry, cat = Registry(), catalog()
    if ref.get("kind") == "ClusterRole":
        plural, namespace = "clusterroles", ""
    else:
        plural = "roles"
    try:
        role = registry.get(
            cat.lookup(rbac.RBAC_GROUP, "v1", plural), namespace, ref.get("name", "")
        )
    except errors.StatusError:
        return []
    return list(role.get("rules") or [])


def check_no_escalation(user: UserInfo, obj: dict) -> None:
    """Raise a 403 ``StatusError`` if writing ``obj`` would escalate ``user``
    (a refusal is confirmed against storage's newest RBAC objects first)."""
    try:
        _check_no_escalation(user, obj)
    except errors.StatusError:
        if not rbac.refresh():
            raise
        _check_no_escalation(user, obj)


def _check_no_escalation(user: UserInfo, obj: dict) -> None:
    kind = obj.get("kind")
    plural = _KINDS.get(kind or "")
    if plural is None:
        return
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace", "") if kind in ("Role", "RoleBinding") else ""
    name = meta.get("name", "")
    held = rbac.rules_for(user, namespace)
    if kind in ("Role", "ClusterRole"):
        if _allowed(user, "escalate", plural, namespace, name):
            return
        missing = covers(held, list(obj.get("rules") or []))
        if missing:
            raise _refuse(user, plural, name, missing)
        # An aggregationRule can gather anything: kube asks for * on *.* and every URL.
        if obj.get("aggregationRule") and covers(held, _FULL_AUTHORITY):
            raise errors.forbidden(
                rbac.RBAC_GROUP,
                plural,
                name,
                "must have cluster-admin privileges to use the aggregationRule",
            )
        return
    ref = obj.get("roleRef") or {}
    role_plural = "clusterroles" if ref.get("kind") == "ClusterRole" else "roles"
    # kube asks about `bind` in the binding's namespace, whatever the role's kind.
    if _allowed(user, "bind", role_plural, namespace, ref.get("name", "")):
        return
    missing = covers(held, _role_rules(obj, namespace))
    if missing:
        raise _refuse(user, plural, name, missing)


def admission_for(user: UserInfo) -> Callable[[dict, dict | None], None]:
    """The check a ``Registry`` runs on every new object (``old`` None on create)."""

    def admit(obj: dict, old: dict | None) -> None:
        if old is not None and (
            obj.get("rules"),
            obj.get("roleRef"),
            obj.get("subjects"),
            obj.get("aggregationRule"),
        ) == (
            old.get("rules"),
            old.get("roleRef"),
            old.get("subjects"),
            old.get("aggregationRule"),
        ):
            return  # metadata-only change: grants nothing new
        check_no_escalation(user, obj)
        rbac.invalidate()

    return admit
