"""The lifecycle's strategy hooks reach the type's own strategy through every
wrapper (a wrapper that forgot one would make namespaces vanish at once)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest


def _setup_django() -> None:
    """Settings for importing the registry without a server (as tests/admin does),
    leaving the environment as it was for the servers other suites start."""
    saved = {
        k: os.environ.get(k)
        for k in ("KAPI_DATA_DIR", "DATABASE_URL", "DJANGO_SETTINGS_MODULE")
    }
    if not os.environ.get("KAPI_DATA_DIR"):
        data_dir = tempfile.mkdtemp(prefix="kapi-hooks-")
        atexit.register(shutil.rmtree, data_dir, True)
        os.environ["KAPI_DATA_DIR"] = data_dir
    os.environ.setdefault(
        "DATABASE_URL", "postgresql://postgres:@/postgres?host=/nonexistent"
    )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
    import django

    django.setup()
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


_setup_django()

from kapi.kinds.builtin import BUILTIN_TYPES  # noqa: E402

HOOKS = (
    "pending_finalizers",
    "prepare_for_graceful_delete",
    "prepare_for_subresource_update",
)


@pytest.mark.parametrize("hook", HOOKS)
def test_wrappers_delegate_lifecycle_hooks(hook):
    for rt in BUILTIN_TYPES:
        strategy = rt.strategy
        inner = getattr(strategy, "inner", None)
        if inner is not None:
            assert hook in type(strategy).__dict__, (
                f"{type(strategy).__name__} hides {hook}"
            )


def test_namespace_strategy_as_served():
    ns = next(rt for rt in BUILTIN_TYPES if rt.kind == "Namespace")
    assert ns.strategy.pending_finalizers(
        {"metadata": {}, "spec": {"finalizers": ["kubernetes"]}}
    )
    obj = {"metadata": {}, "status": {"phase": "Active"}}
    ns.strategy.prepare_for_graceful_delete(obj)
    assert obj["status"]["phase"] == "Terminating"
