"""Types without a schema (custom resources): strategic merge is refused with 415,
the other patch types work on plain maps."""

from __future__ import annotations

import os

import django
import pytest

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
django.setup()

from kapi import errors  # noqa: E402
from kapi.patch import MERGE_PATCH, STRATEGIC_MERGE_PATCH  # noqa: E402
from kapi.registry.patch import unsupported_patch_type  # noqa: E402
from kapi.registry.resource import ResourceType  # noqa: E402
from kapi.registry.store import Registry  # noqa: E402
from kapi.registry.strategy import Strategy  # noqa: E402
from kapi.schema import TypeSchema, schema_for  # noqa: E402


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
