"""Strategic merge patch scenarios (``strategic_scenarios.yaml``) and errors."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kapi.patch import BadPatch, strategic_merge_patch
from kapi.schema import TypeSchema, builtin_definitions

SCENARIOS = yaml.safe_load(
    (Path(__file__).parent / "strategic_scenarios.yaml").read_text()
)


def _schema(name: str) -> TypeSchema:
    defs = builtin_definitions()
    return TypeSchema(defs[name], defs)


@pytest.mark.parametrize("case", SCENARIOS, ids=[c["name"] for c in SCENARIOS])
def test_scenario(case):
    result = strategic_merge_patch(
        case["original"], case["patch"], _schema(case["type"])
    )
    assert result == case["expected"]


def test_unknown_patch_directive_is_bad():
    with pytest.raises(BadPatch):
        strategic_merge_patch(
            {}, {"data": {"$patch": "explode"}}, _schema("io.k8s.api.core.v1.ConfigMap")
        )


def test_missing_merge_key_is_bad():
    with pytest.raises(BadPatch, match="merge key"):
        strategic_merge_patch(
            {"secrets": [{"name": "a"}]},
            {"secrets": [{"namespace": "x"}]},
            _schema("io.k8s.api.core.v1.ServiceAccount"),
        )


def test_original_not_mutated():
    original = {"data": {"a": "1"}}
    strategic_merge_patch(
        original, {"data": {"a": None}}, _schema("io.k8s.api.core.v1.ConfigMap")
    )
    assert original == {"data": {"a": "1"}}
