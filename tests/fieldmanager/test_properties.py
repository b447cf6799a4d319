"""Property tests for apply and managedFields (hypothesis).

* applying the same configuration twice is a no-op;
* two managers applying disjoint fields never conflict;
* managedFields always cover exactly the fields set in the object.
"""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from kapi.fieldmanager import FieldManager, from_fields_v1
from kapi.fieldmanager.typed import field_set, named_fields_as_members
from kapi.schema import TypeSchema, builtin_definitions

DEFS = builtin_definitions()
CONFIGMAP = TypeSchema(DEFS["io.k8s.api.core.v1.ConfigMap"], DEFS)
SERVICEACCOUNT = TypeSchema(DEFS["io.k8s.api.core.v1.ServiceAccount"], DEFS)

keys = st.text(alphabet="abcdefgh", min_size=1, max_size=3)
values = st.text(alphabet="xyz01", max_size=3)
string_maps = st.dictionaries(keys, values, max_size=4)


@st.composite
def configmaps(draw, key_prefix: str = ""):
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}
    data = draw(string_maps)
    if data:
        obj["data"] = {key_prefix + k: v for k, v in data.items()}
    labels = draw(string_maps)
    if labels:
        obj["metadata"]["labels"] = {key_prefix + k: v for k, v in labels.items()}
    finalizers = draw(st.lists(keys, unique=True, max_size=3))
    if finalizers:
        obj["metadata"]["finalizers"] = [key_prefix + f for f in finalizers]
    return obj


@st.composite
def serviceaccounts(draw):
    obj = {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}}
    secrets = draw(st.lists(keys, unique=True, max_size=4))
    if secrets:
        obj["secrets"] = [{"name": s} for s in secrets]
    if draw(st.booleans()):
        obj["automountServiceAccountToken"] = draw(st.booleans())
    return obj


def _user_fields(obj: dict, schema: TypeSchema) -> set:
    """What an object sets, minus what nobody owns (system fields)."""
    fields = field_set(
        {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}, schema
    )
    return {
        p
        for p in fields
        if p[:1] != ("f:metadata",) or p[1:2] not in (("f:name",), ("f:managedFields",))
    }


def _covered(obj: dict, schema: TypeSchema) -> set:
    owned: set = set()
    for entry in obj["metadata"].get("managedFields", []):
        owned |= from_fields_v1(entry["fieldsV1"])
    return owned


@settings(max_examples=60, deadline=None)
@given(configmaps(), configmaps())
def test_same_apply_twice_is_a_noop(first, second):
    manager = FieldManager(CONFIGMAP, "v1")
    live = manager.apply(None, first, "a", False)
    live = manager.apply(live, second, "a", False)
    again = manager.apply(copy.deepcopy(live), second, "a", False)
    assert again == live


@settings(max_examples=60, deadline=None)
@given(
    configmaps(key_prefix="a"), configmaps(key_prefix="b"), configmaps(key_prefix="a")
)
def test_disjoint_appliers_never_conflict(a1, b1, a2):
    manager = FieldManager(CONFIGMAP, "v1")
    live = manager.apply(None, a1, "alice", False)
    live = manager.apply(live, b1, "bob", False)
    live = manager.apply(live, a2, "alice", False)
    live = manager.apply(live, b1, "bob", False)
    for key, value in b1.get("data", {}).items():
        assert live["data"][key] == value


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "u"]), configmaps()),
        min_size=1,
        max_size=4,
    )
)
def test_managed_fields_cover_exactly_the_set_fields(steps):
    manager = FieldManager(CONFIGMAP, "v1")
    live = None
    for who, obj in steps:
        if who == "u":
            live = manager.update(live, copy.deepcopy(obj), "updater")
        else:
            live = manager.apply(live, obj, who, True)
    set_fields = _user_fields(live, CONFIGMAP)
    owned = _covered(live, CONFIGMAP)
    # Every set leaf is owned, and everything owned is set (maps count as set
    # when any of their fields is).
    assert {p for p in set_fields if p} <= named_fields_as_members(
        owned, CONFIGMAP
    ) | owned
    parents = {p[:i] for p in set_fields for i in range(1, len(p) + 1)}
    assert owned <= parents


@settings(max_examples=40, deadline=None)
@given(serviceaccounts(), serviceaccounts())
def test_list_map_apply_twice_is_a_noop(first, second):
    manager = FieldManager(SERVICEACCOUNT, "v1")
    live = manager.apply(None, first, "a", False)
    live = manager.apply(live, second, "a", False)
    assert manager.apply(copy.deepcopy(live), second, "a", False) == live
    names = [s["name"] for s in live.get("secrets", [])]
    assert names == [s["name"] for s in second.get("secrets", [])]
