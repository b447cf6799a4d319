"""The catalog serves the kinds settings hand it, and only those: fixed types
from ``KAPI_RESOURCE_TYPE_PROVIDERS`` in the order named, custom ones from the
``KAPI_CUSTOM_RESOURCE_TYPES`` source (none here: no storage is read)."""

from __future__ import annotations

import importlib

from kapi.registry.resource import ResourceType
from kapi.registry.strategy import Strategy


def _widget(kind: str, group: str = "test.kapi.dev") -> ResourceType:
    return ResourceType(
        group=group,
        version="v1",
        kind=kind,
        plural="widgets",
        singular="widget",
        namespaced=True,
        strategy=Strategy(),
    )


#: The module itself (``kapi.registry.catalog`` as an attribute is the function).
catalog_module = importlib.import_module("kapi.registry.catalog")

FIRST = (_widget("Widget"),)
SECOND = (_widget("Shadow"), _widget("Gadget", group="other.kapi.dev"))


def first_provider() -> tuple[ResourceType, ...]:
    return FIRST


def second_provider() -> tuple[ResourceType, ...]:
    return SECOND


def test_the_catalog_serves_the_types_its_providers_hand_in(
    settings, monkeypatch
) -> None:
    """Of two types with the same group, version and plural the earlier
    provider's is served; nothing else (no built-in kind) is."""
    settings.KAPI_RESOURCE_TYPE_PROVIDERS = [
        f"{__name__}.first_provider",
        f"{__name__}.second_provider",
    ]
    settings.KAPI_CUSTOM_RESOURCE_TYPES = None
    monkeypatch.setattr(catalog_module, "_state", None)
    served = catalog_module.catalog(fresh=True)
    assert served.lookup("test.kapi.dev", "v1", "widgets").kind == "Widget"
    assert served.lookup("other.kapi.dev", "v1", "widgets").kind == "Gadget"
    assert [t.kind for t in served.types()] == ["Widget", "Gadget"]
    assert served.lookup("", "v1", "configmaps") is None


def test_the_default_settings_hand_in_the_builtin_virtual_and_sync_kinds() -> None:
    types = catalog_module.provided_types()
    kinds = {(t.group, t.kind) for t in types}
    assert {
        ("", "ConfigMap"),
        ("authorization.k8s.io", "SubjectAccessReview"),
        ("sync.kapi.dev", "Sync"),
    } <= kinds
    source = catalog_module._custom_source()
    assert (source.group, source.resource) == (
        "apiextensions.k8s.io",
        "customresourcedefinitions",
    )
