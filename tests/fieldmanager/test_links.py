"""The smaller links and helpers: manager names, FieldsV1 encoding, paths, the cap
on Update entries, timestamps of unchanged writes."""

from __future__ import annotations

import copy

from kapi.fieldmanager import (
    FieldManager,
    from_fields_v1,
    manager_or_user_agent,
    to_fields_v1,
)
from kapi.fieldmanager.capmanagers import MAX_UPDATE_MANAGERS
from kapi.fieldmanager.fieldpath import path_string
from kapi.schema import TypeSchema, builtin_definitions

DEFS = builtin_definitions()
CONFIGMAP = TypeSchema(DEFS["io.k8s.api.core.v1.ConfigMap"], DEFS)


def _cm(data: dict) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "x"},
        "data": data,
    }


def test_manager_from_user_agent():
    """The fieldManager wins; else the User-Agent before its first slash."""
    assert (
        manager_or_user_agent("mine", "kubectl/v1.37.1 (linux/amd64) kubernetes/abc")
        == "mine"
    )
    assert (
        manager_or_user_agent("", "kubectl/v1.37.1 (linux/amd64) kubernetes/abc")
        == "kubectl"
    )
    assert manager_or_user_agent("", "python-requests/2.3") == "python-requests"
    assert manager_or_user_agent("", "") == ""


def test_fields_v1_round_trip_puts_dot_first():
    fields = {
        ("f:data",),
        ("f:data", "f:a"),
        ('k:{"name":"x"}',),
        ('k:{"name":"x"}', "f:v"),
    }
    encoded = to_fields_v1(fields)
    assert list(encoded["f:data"]) == [".", "f:a"]
    assert from_fields_v1(encoded) == fields


def test_path_strings_match_structured_merge_diff():
    assert path_string(("f:data", "f:key")) == ".data.key"
    assert path_string(("f:spec", 'k:{"port":80,"protocol":"TCP"}', "f:name")) == (
        '.spec[port=80,protocol="TCP"].name'
    )
    assert (
        path_string(("f:metadata", "f:finalizers", 'v:"a"'))
        == '.metadata.finalizers[="a"]'
    )
    assert path_string(("f:items", "i:3")) == ".items[3]"


def test_update_entries_are_capped():
    """Beyond ten Update managers the oldest merge into ancient-changes."""
    manager = FieldManager(CONFIGMAP, "v1")
    live = None
    data: dict = {}
    for i in range(MAX_UPDATE_MANAGERS + 3):
        data = {**data, f"k{i}": "v"}
        live = manager.update(live, _cm(dict(data)), f"m{i}")
        # Distinct times keep the order stable within one second.
        for entry in live["metadata"]["managedFields"]:
            if entry["manager"] == f"m{i}":
                entry["time"] = f"2026-01-01T00:00:{i:02d}Z"
    names = [e["manager"] for e in live["metadata"]["managedFields"]]
    assert len(names) == MAX_UPDATE_MANAGERS
    assert "ancient-changes" in names


def test_unchanged_update_keeps_times():
    """An update that changes nothing keeps every entry's time (no spurious write)."""
    manager = FieldManager(CONFIGMAP, "v1")
    live = manager.update(None, _cm({"a": "1"}), "m")
    live["metadata"]["managedFields"][0]["time"] = "2000-01-01T00:00:00Z"
    again = manager.update(live, copy.deepcopy(live), "other")
    assert again["metadata"]["managedFields"] == live["metadata"]["managedFields"]


def test_apply_after_update_shares_equal_values():
    manager = FieldManager(CONFIGMAP, "v1")
    live = manager.update(None, _cm({"a": "1"}), "ctl")
    live = manager.apply(live, _cm({"a": "1"}), "app", False)
    owners = {e["manager"] for e in live["metadata"]["managedFields"]}
    assert owners == {"ctl", "app"}
