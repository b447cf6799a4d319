"""Unit tests without a server: rule matching, coverage, aggregation, the
in-flight limiter and the YAML guard."""

from __future__ import annotations

import pytest

from kapi.auth.aggregation import aggregated_rules, converged
from kapi.auth.attributes import Attributes, forbidden_message
from kapi.auth.inflight import InFlightLimiter, is_long_running
from kapi.auth.rbac import authorize, build_index
from kapi.auth.rules import compact_string, covers, rule_allows
from kapi.auth.user import UserInfo

ALICE = UserInfo("alice", "", ("devs", "system:authenticated"))


def _attrs(verb, resource, ns="n", name="", sub="", group=""):
    return Attributes(ALICE, verb, True, ns, group, "v1", resource, sub, name)


def test_rule_matching() -> None:
    """Verbs, groups, resources, subresources (incl. */sub), names and URL prefixes."""
    rule = {
        "apiGroups": [""],
        "resources": ["pods", "*/status"],
        "verbs": ["get"],
        "resourceNames": ["a"],
    }
    assert rule_allows(_attrs("get", "pods", name="a"), rule)
    assert not rule_allows(_attrs("get", "pods", name="b"), rule)
    assert rule_allows(_attrs("get", "deployments", name="a", sub="status"), rule)
    assert not rule_allows(_attrs("get", "pods", name="a", sub="log"), rule)
    url = {"nonResourceURLs": ["/apis/*"], "verbs": ["get"]}
    assert rule_allows(Attributes(ALICE, "get", False, path="/apis/apps"), url)
    assert not rule_allows(Attributes(ALICE, "get", False, path="/api"), url)


def test_covers_and_compact_string() -> None:
    owner = [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]
    assert (
        covers(
            owner, [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]
        )
        == []
    )
    missing = covers(
        owner,
        [
            {
                "apiGroups": [""],
                "resources": ["configmaps", "secrets"],
                "verbs": ["get", "delete"],
            }
        ],
    )
    assert compact_string(missing) == (
        '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}\n'
        '{APIGroups:[""], Resources:["configmaps"], Verbs:["delete"]}'
    )


def test_aggregation_chains_converge() -> None:
    roles = {
        "view": {
            "metadata": {"labels": {"e": "1"}},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"v": "1"}}]},
        },
        "edit": {
            "metadata": {},
            "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"e": "1"}}]},
        },
        "r": {
            "metadata": {"labels": {"v": "1"}},
            "rules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}],
        },
    }
    # One pass takes in what the selected roles hold now; chains converge.
    assert aggregated_rules("edit", roles) == []
    assert aggregated_rules("view", roles) == roles["r"]["rules"]
    done = converged(roles)
    assert done["edit"]["rules"] == roles["r"]["rules"]
    assert done["view"]["rules"] == roles["r"]["rules"]


def test_bindings_by_group_and_namespace() -> None:
    role = {
        "metadata": {"name": "r", "namespace": "n"},
        "rules": [{"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}],
    }
    binding = {
        "metadata": {"name": "b", "namespace": "n"},
        "roleRef": {"kind": "Role", "name": "r"},
        "subjects": [{"kind": "Group", "name": "devs"}],
    }
    idx = build_index([role], [], [binding], [])
    decision = authorize(_attrs("list", "pods"), idx)
    assert decision.allowed
    assert (
        decision.reason
        == 'RBAC: allowed by RoleBinding "b" in namespace "n" of Role "r" to Group "devs"'
    )
    assert not authorize(_attrs("list", "pods", ns="other"), idx).allowed
    assert not authorize(_attrs("delete", "pods"), idx).allowed


def test_forbidden_message_wording() -> None:
    assert forbidden_message(_attrs("get", "configmaps", name="x")) == (
        'User "alice" cannot get resource "configmaps" in API group "" in the namespace "n"'
    )
    assert forbidden_message(_attrs("list", "nodes", ns="")) == (
        'User "alice" cannot list resource "nodes" in API group "" at the cluster scope'
    )


def test_in_flight_limiter() -> None:
    limiter = InFlightLimiter(2)
    assert limiter.acquire("a") and limiter.acquire("a")
    assert not limiter.acquire("a")
    assert limiter.acquire("b")
    limiter.release("a")
    assert limiter.acquire("a")


@pytest.mark.parametrize(
    "doc", [b"a: &x [1,2]\nb: *x\n", b"apiVersion: v1\nkind: ConfigMap\n"]
)
def test_yaml_guard_allows_ordinary_documents(doc: bytes) -> None:
    from kapi.api.limits import check_yaml

    check_yaml(doc)


def test_long_running_requests_as_kube() -> None:
    """kube's BasicLongRunningRequestCheck: watch/proxy verbs and the streaming
    subresources; an ordinary get or list is not."""
    assert is_long_running(_attrs("watch", "pods"))
    assert is_long_running(_attrs("get", "pods", name="p", sub="log"))
    assert is_long_running(_attrs("create", "pods", name="p", sub="exec"))
    assert not is_long_running(_attrs("list", "pods"))
    assert not is_long_running(_attrs("get", "pods", name="p", sub="status"))


def test_verified_token_cache_honours_keys_and_expiry() -> None:
    """A cached verification counts only while its key is kept and its claims
    are within exp/nbf; the least recently used entry goes first."""
    import time

    from kapi.auth.tokencache import VerifiedTokens

    cache = VerifiedTokens(max_entries=2)
    key = VerifiedTokens.key("tok", ["kapi"], "kapi")
    assert key != VerifiedTokens.key("tok", ["other"], "kapi")
    claims = {"sub": "a", "exp": time.time() + 60}
    cache.put(key, claims, "k1")
    assert cache.get(key, {"k1", "k2"}) == claims
    assert cache.get(key, {"k2"}) is None  # key retired: gone for good
    assert cache.get(key, {"k1"}) is None
    expired = VerifiedTokens.key("old", None, "kapi")
    cache.put(expired, {"sub": "b", "exp": time.time() - 1}, "k1")
    assert cache.get(expired, {"k1"}) is None
    early = VerifiedTokens.key("early", None, "kapi")
    cache.put(early, {"sub": "c", "nbf": time.time() + 60}, "k1")
    assert cache.get(early, {"k1"}) is None
    for name in ("x", "y", "z"):
        cache.put(VerifiedTokens.key(name, None, "i"), {"sub": name}, "k1")
    assert cache.get(VerifiedTokens.key("x", None, "i"), {"k1"}) is None
    assert cache.get(VerifiedTokens.key("z", None, "i"), {"k1"}) == {"sub": "z"}


def test_index_is_not_answered_stale_while_rebuilding(monkeypatch) -> None:
    """While one thread rebuilds the index after an RBAC change, another asking
    for it waits for the new index instead of answering from the old one."""
    import threading

    from kapi.auth import rbac

    old = rbac.PolicyIndex(revision=1, stamp=(1, 1, 1))
    building = threading.Event()
    release = threading.Event()
    stamp = {"now": (2, 2, 3)}

    def load(now: tuple) -> rbac.PolicyIndex:
        building.set()
        assert release.wait(10)
        return rbac.PolicyIndex(revision=now[0], stamp=now)

    monkeypatch.setattr(rbac, "_state", rbac._State())
    monkeypatch.setattr(rbac, "_stamp", lambda: stamp["now"])
    monkeypatch.setattr(rbac, "_load", load)
    rbac._state.index = old
    got: dict[str, rbac.PolicyIndex] = {}
    first = threading.Thread(target=lambda: got.setdefault("first", rbac.index()))
    first.start()
    assert building.wait(10)
    second = threading.Thread(target=lambda: got.setdefault("second", rbac.index()))
    second.start()
    second.join(0.3)
    assert second.is_alive(), "answered from the stale index during the rebuild"
    release.set()
    first.join(10)
    second.join(10)
    assert got["first"].revision == got["second"].revision == 2


def test_index_rebuilds_for_a_change_committed_below_the_newest_version(
    monkeypatch,
) -> None:
    """Versions commit out of order: a RoleBinding change at version 4 that
    commits after version 5 was read leaves the newest version at 5, yet the
    index must be rebuilt (the change log's stamp moved)."""
    from kapi.auth import rbac

    stamp = {"now": (5, 2, 9)}
    loads: list[tuple] = []

    def load(now: tuple) -> rbac.PolicyIndex:
        loads.append(now)
        return rbac.PolicyIndex(revision=now[0], stamp=now)

    monkeypatch.setattr(rbac, "_state", rbac._State())
    monkeypatch.setattr(rbac, "_stamp", lambda: stamp["now"])
    monkeypatch.setattr(rbac, "_load", load)
    first = rbac.index(fresh=True)
    assert rbac.index(fresh=True) is first  # nothing changed: no rebuild
    stamp["now"] = (5, 3, 13)  # version 4 became visible
    second = rbac.index(fresh=True)
    assert second is not first
    assert loads == [(5, 2, 9), (5, 3, 13)]
