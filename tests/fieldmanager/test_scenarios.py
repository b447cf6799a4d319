"""Field management scenarios from ``scenarios.yaml`` run through ``FieldManager``."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from kapi import errors
from kapi.fieldmanager import FieldManager
from kapi.schema import TypeSchema, builtin_definitions

SCENARIOS = yaml.safe_load((Path(__file__).parent / "scenarios.yaml").read_text())


def _schema(case) -> TypeSchema | None:
    if "schema" in case:
        return TypeSchema(case["schema"]) if case["schema"] else None
    defs = builtin_definitions()
    return TypeSchema(defs[case.get("type", "io.k8s.api.core.v1.ConfigMap")], defs)


def _full(obj: dict) -> dict:
    out = {"apiVersion": "v1", "kind": "Thing", **copy.deepcopy(obj)}
    out.setdefault("metadata", {})["name"] = "x"
    return out


def _strip(obj: dict) -> dict:
    out = copy.deepcopy(obj)
    out.pop("apiVersion", None)
    out.pop("kind", None)
    meta = out.get("metadata", {})
    meta.pop("managedFields", None)
    meta.pop("name", None)
    if not meta:
        out.pop("metadata", None)
    return out


@pytest.mark.parametrize("case", SCENARIOS, ids=[c["name"] for c in SCENARIOS])
def test_scenario(case):
    manager = FieldManager(_schema(case), "v1")
    live = None
    for step in case["steps"]:
        if step["op"] == "update":
            live = manager.update(live, _full(step["object"]), step["manager"])
            continue
        if step.get("conflicts"):
            with pytest.raises(errors.StatusError) as raised:
                manager.apply(
                    live,
                    _full(step["object"]),
                    step["manager"],
                    step.get("force", False),
                )
            status = raised.value.status
            assert status["code"] == 409 and status["reason"] == "Conflict"
            causes = status["details"]["causes"]
            assert [c["field"] for c in causes] == [
                c["field"] for c in step["conflicts"]
            ]
            for cause, want in zip(causes, step["conflicts"], strict=True):
                assert cause["reason"] == "FieldManagerConflict"
                assert cause["message"].startswith(f'conflict with "{want["manager"]}"')
            assert status["message"].startswith(
                f"Apply failed with {len(causes)} conflict"
            )
            continue
        before = copy.deepcopy(live)
        live = manager.apply(
            live, _full(step["object"]), step["manager"], step.get("force", False)
        )
        if step.get("unchanged"):
            assert live == before
    assert _strip(live) == case["object"]
    got = {
        f"{e['manager']}/{e['operation']}": e["fieldsV1"]
        for e in live.get("metadata", {}).get("managedFields", [])
    }
    assert got == case["managed"]
    for entry in live.get("metadata", {}).get("managedFields", []):
        assert (
            entry["fieldsType"] == "FieldsV1"
            and entry["apiVersion"] == "v1"
            and entry["time"]
        )
