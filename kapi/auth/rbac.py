"""The RBAC authorizer (kube's ``plugin/pkg/auth/authorizer/rbac``).

Roles, ClusterRoles, RoleBindings and ClusterRoleBindings are read from storage
into a per-process ``PolicyIndex``: for each namespace ("" for
ClusterRoleBindings) a map from subject (``User``/``Group`` name) to the rules
its bindings grant. An aggregating ClusterRole's rules are read from ``.rules``,
where the aggregation controller (``kapi.lifecycle.aggregation``) writes them.
A request is allowed when any rule of a binding in its namespace or of a
ClusterRoleBinding matching the user or one of its groups allows it; there is no
deny. The index is rebuilt when storage's RBAC change log looks different,
checked at most every ``FRESHNESS_SECONDS`` (and at once after this process
wrote one, or with ``index(fresh=True)``). "Different" is the log's stamp (its
newest version, row count and version sum), not its newest version alone:
versions commit out of order, so a change with a lower version than the
newest one read can still become visible later, and must not be missed.

A denial is never answered from an index that might be stale: before saying no,
``authorize`` checks storage again. So a grant is seen by every API process as
soon as it is committed (a client that watched its Role appear on one server is
not refused by another); only a revocation may take ``FRESHNESS_SECONDS`` to
reach a process, as kube's informer-fed authorizer lags too.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

from kapi.auth.attributes import Attributes
from kapi.auth.rules import rule_allows
from kapi.auth.user import SERVICE_ACCOUNT_PREFIX, UserInfo

__all__ = [
    "FRESHNESS_SECONDS",
    "RBAC_GROUP",
    "Decision",
    "PolicyIndex",
    "authorize",
    "index",
    "invalidate",
    "refresh",
    "rules_for",
]

log = logging.getLogger(__name__)

RBAC_GROUP = "rbac.authorization.k8s.io"
FRESHNESS_SECONDS = 0.25
_MEMO_ENTRIES = 10_000


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reason: str = ""


@dataclass
class _Grant:
    """The rules one binding grants, and how to name it in a reason."""

    rules: list[dict]
    describe: str


@dataclass
class PolicyIndex:
    # namespace ("" = cluster-wide) -> ("User"|"Group", name) -> grants
    grants: dict[str, dict[tuple[str, str], list[_Grant]]] = field(default_factory=dict)
    revision: int = -1
    #: The change log's stamp this index was read at (see ``_stamp``).
    stamp: tuple = ()

    # (username, groups, namespace) -> grants: the lookup of a caller's bindings,
    # made once per index (a new index starts empty) and bounded.
    _memo: dict[tuple, tuple[_Grant, ...]] = field(default_factory=dict, repr=False)

    def subject_grants(self, user: UserInfo, namespace: str) -> tuple[_Grant, ...]:
        memo_key = (user.username, tuple(user.groups), namespace)
        found = self._memo.get(memo_key)
        if found is not None:
            return found
        keys = [("User", user.username), *(("Group", g) for g in user.groups)]
        out: list[_Grant] = []
        for ns in ("", namespace) if namespace else ("",):
            by_subject = self.grants.get(ns)
            if not by_subject:
                continue
            for key in keys:
                out.extend(by_subject.get(key, ()))
        if len(self._memo) >= _MEMO_ENTRIES:
            self._memo.clear()
        self._memo[memo_key] = found = tuple(out)
        return found


def _subject_keys(subject: dict, binding_ns: str) -> tuple[str, str] | None:
    kind = subject.get("kind")
    name = subject.get("name", "")
    if kind == "User":
        return ("User", name)
    if kind == "Group":
        return ("Group", name)
    if kind == "ServiceAccount":
        ns = subject.get("namespace") or binding_ns
        return ("User", f"{SERVICE_ACCOUNT_PREFIX}{ns}:{name}")
    return None


def build_index(
    roles: list[dict],
    cluster_roles: list[dict],
    bindings: list[dict],
    cluster_bindings: list[dict],
    revision: int = -1,
    stamp: tuple = (),
) -> PolicyIndex:
    # ``.rules`` as stored, as kube reads them: for an aggregating ClusterRole the
    # aggregation controller (and the bootstrap) keep them the union it selects.
    cr_rules = {
        r["metadata"]["name"]: list(r.get("rules") or []) for r in cluster_roles
    }
    role_rules = {
        (r["metadata"].get("namespace", ""), r["metadata"]["name"]): list(
            r.get("rules") or []
        )
        for r in roles
    }
    idx = PolicyIndex(revision=revision, stamp=stamp)
    for binding, cluster in [(b, True) for b in cluster_bindings] + [
        (b, False) for b in bindings
    ]:
        meta = binding.get("metadata") or {}
        ns = "" if cluster else meta.get("namespace", "")
        ref = binding.get("roleRef") or {}
        if ref.get("kind") == "ClusterRole":
            rules = cr_rules.get(ref.get("name", ""))
        elif ref.get("kind") == "Role" and not cluster:
            rules = role_rules.get((ns, ref.get("name", "")))
        else:
            rules = None
        if not rules:
            continue
        for subject in binding.get("subjects") or []:
            key = _subject_keys(subject, ns)
            if key is None:
                continue
            kind = "ClusterRoleBinding" if cluster else "RoleBinding"
            where = "" if cluster else f' in namespace "{ns}"'
            describe = (
                f'{kind} "{meta.get("name")}"{where} of {ref.get("kind")} "{ref.get("name")}" '
                f'to {subject.get("kind")} "{subject.get("name")}"'
            )
            idx.grants.setdefault(ns, {}).setdefault(key, []).append(
                _Grant(rules, describe)
            )
    return idx


class _State:
    def __init__(self) -> None:
        self.index: PolicyIndex | None = None
        self.checked_at = 0.0
        self.lock = threading.Lock()


_state = _State()


def _stamp() -> tuple[int, int, int]:
    """The RBAC objects' change stamp (``Storage.change_stamp``): any committed
    RBAC write moves it, so the policy index is rebuilt."""
    from kapi.storage import default_storage

    return default_storage().change_stamp(RBAC_GROUP)


def _load(stamp: tuple) -> PolicyIndex:
    from kapi.registry.catalog import catalog
    from kapi.registry.store import Registry

    registry = Registry()
    cat = catalog()

    def items(plural: str) -> list[dict]:
        return registry.list(cat.lookup(RBAC_GROUP, "v1", plural), None)["items"]

    return build_index(
        items("roles"),
        items("clusterroles"),
        items("rolebindings"),
        items("clusterrolebindings"),
        stamp[0],
        stamp,
    )


def invalidate() -> None:
    """Make the next check read storage (this process just wrote RBAC objects)."""
    _state.checked_at = 0.0


def refresh() -> bool:
    """Check storage now; True if that gave a newer index than the last one used
    (a decision made from the old one may change)."""
    before = _state.index
    return index(fresh=True) is not before


def index(fresh: bool = False) -> PolicyIndex:
    """The current policy index, rebuilt when storage has other RBAC objects
    (looked at every ``FRESHNESS_SECONDS``, or now with ``fresh``: then it
    holds every RBAC change committed before the call)."""
    now = time.monotonic()
    current = _state.index
    if (
        not fresh
        and current is not None
        and now - _state.checked_at < FRESHNESS_SECONDS
    ):
        return current
    stamp = _stamp()
    if current is not None and current.stamp == stamp:
        _state.checked_at = now
        return current
    # Only once the index is current does the check count as done: a thread
    # arriving while another rebuilds checks too, and waits for the rebuild
    # instead of answering from the index the change made stale.
    with _state.lock:
        if _state.index is None or _state.index.stamp != stamp:
            _state.index = _load(stamp)
        _state.checked_at = now
        return _state.index


def authorize(attrs: Attributes, policy: PolicyIndex | None = None) -> Decision:
    """kube's RBAC decision: allowed with the binding that allowed it, or no
    opinion. Without ``policy``, a denial is confirmed against storage first."""
    if policy is not None:
        return _decide(attrs, policy)
    decision = _decide(attrs, index())
    if not decision.allowed and refresh():
        decision = _decide(attrs, index())
    return decision


def _decide(attrs: Attributes, policy: PolicyIndex) -> Decision:
    for grant in policy.subject_grants(
        attrs.user, attrs.namespace if attrs.resource_request else ""
    ):
        for rule in grant.rules:
            if rule_allows(attrs, rule):
                return Decision(True, f"RBAC: allowed by {grant.describe}")
    return Decision(False, "")


def rules_for(
    user: UserInfo, namespace: str, policy: PolicyIndex | None = None
) -> list[dict]:
    """Every rule that applies to ``user`` in ``namespace`` ("" = cluster-wide only)."""
    policy = policy or index()
    out: list[dict] = []
    for grant in policy.subject_grants(user, namespace):
        out.extend(r for r in grant.rules if r not in out)
    return out
