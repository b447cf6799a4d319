"""The generic registry imports no kind: kinds build on the registry, and the
catalog is handed them by settings (``KAPI_RESOURCE_TYPE_PROVIDERS``,
``KAPI_CUSTOM_RESOURCE_TYPES``), so an import of ``kapi.kinds`` (or of the sync
app) from ``kapi/registry/`` would be a layering cycle coming back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_REPO = Path(__file__).resolve().parents[2]

_PROBE = """
import importlib, json, pkgutil, sys
import kapi.registry
prefix = "kapi.registry."
names = [m.name for m in pkgutil.walk_packages(kapi.registry.__path__, prefix)]
for name in names:
    importlib.import_module(name)
loaded = sorted(
    m for m in sys.modules
    if m.split(".")[:2] == ["kapi", "kinds"] or m.split(".")[0] == "sync"
)
print(json.dumps({"imported": names, "kinds": loaded}))
"""


def test_importing_every_registry_module_imports_no_kind() -> None:
    """Each module of ``kapi.registry``, imported in a fresh interpreter (nothing
    else loaded first), leaves no ``kapi.kinds`` or ``sync`` module in sys.modules."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "kapi.settings"}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE],
        cwd=_REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert "kapi.registry.store" in result["imported"]
    assert "kapi.registry.catalog" in result["imported"]
    assert result["kinds"] == []
