"""Types without a schema (custom resources): strategic merge is refused with 415,
the other patch types work on plain maps."""

from __future__ import annotations

import pytest

from kapi import errors
from kapi.patch import MERGE_PATCH, STRATEGIC_MERGE_PATCH
from kapi.registry.patch import unsupported_patch_type
from kapi.registry.resource import ResourceType
from kapi.registry.store import Registry
from kapi.registry.strategy import Strategy
from kapi.schema import TypeSchema, schema_for


def _custom(**extra) -> ResourceType:
    return ResourceType(
        group="example.com",
        version="v1",
        kind="Widget",
        plural="widgets",
        singular="widget",
        namespaced=True,
        strategy=Strategy(),
        extra={"custom": True, **extra},
    )


def test_strategic_merge_is_415_without_schema():
    rt = _custom()
    registry = Registry(storage=object())
    with pytest.raises(errors.StatusError) as raised:
        registry.patch(rt, "default", "w", STRATEGIC_MERGE_PATCH, {"spec": {}})
    assert raised.value.code == 415
    assert STRATEGIC_MERGE_PATCH not in raised.value.status["message"]
    assert MERGE_PATCH in unsupported_patch_type(rt).status["message"]


def test_custom_schema_comes_from_extra():
    schema = {
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"a": {"type": "string"}}}
        },
    }
    rt = _custom(openapi_schema=schema)
    found = schema_for(rt)
    assert isinstance(found, TypeSchema)
    assert found.unknown_fields({"spec": {"a": "x", "b": 1}}) == ["spec.b"]
    assert schema_for(_custom()) is None
