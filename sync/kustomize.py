"""Building a kustomization of a checkout, confined to that checkout.

kustomize itself follows any local path a kustomization names (a base may be
any directory, ``../../..`` included, and symlinks are followed) and fetches
remote bases with the server's network identity. Flux answers with a secure
filesystem rooted at the artifact and ``--no-remote-bases``
(fluxcd/pkg/kustomize, GHSA-j77r-2fxf-5jrw); kapi does the same in two steps:

1. ``precheck`` reads every kustomization reachable from the built one
   (``resources``, ``bases``, ``components``, ``crds``, ``configurations``,
   ``generators``/``transformers``/``validators``, every patch ``path``,
   ``replacements``, generators' ``files``/``envs``/``env``, ``openapi.path``)
   and refuses any reference that is absolute, leaves the repository root
   (after resolving symlinks), is remote (``https://``, ``ssh://``, ``git::``,
   ``github.com/...``; unless ``KAPI_SYNC_KUSTOMIZE_REMOTE=1``) or is missing
   (kustomize would try a missing one as a remote). Helm charts are refused.
2. ``build`` runs ``kubectl kustomize`` in ``sync.sandbox`` (scrubbed
   environment, dead proxies, time, memory and output limits, bounded
   concurrency), so a reference the pre-check missed still cannot fetch.

Every problem is a ``RenderError`` message naming the kustomization file.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import yaml

from sync import sandbox

__all__ = ["KUSTOMIZATIONS", "build", "precheck", "remote_allowed"]

KUSTOMIZATIONS = ("kustomization.yaml", "kustomization.yml", "Kustomization")
_MAX_BYTES = 4 * 1024 * 1024
_MAX_KUSTOMIZATIONS = 1000
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: host.tld/... as kustomize reads a remote target without a scheme.
_HOSTLIKE = re.compile(r"^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+(:\d+)?/")
#: Fields that are lists of paths (a file or a kustomization directory).
_PATH_LISTS = ("resources", "bases", "components", "crds", "configurations",
               "generators", "transformers", "validators")
#: Fields that are lists of objects whose ``path`` names a file.
_PATH_OBJECTS = ("patches", "patchesJson6902", "replacements")
_GENERATORS = ("configMapGenerator", "secretGenerator")
_HELM = ("helmCharts", "helmChartInflationGenerator", "helmGlobals")


def remote_allowed() -> bool:
    """An administrator's ``KAPI_SYNC_KUSTOMIZE_REMOTE=1`` (default: refused)."""
    from django.conf import settings

    return bool(getattr(settings, "SYNC_KUSTOMIZE_REMOTE", False)) if settings.configured else False


def looks_remote(ref: str) -> bool:
    """Whether kustomize would fetch ``ref`` rather than read a local path."""
    return ("://" in ref or ref.startswith(("git@", "git::", "gh:", "github.com/"))
            or bool(_HOSTLIKE.match(ref)))


def _kustomization_file(directory: Path) -> Path | None:
    for name in KUSTOMIZATIONS:
        if (directory / name).is_file():
            return directory / name
    return None


class _Checker:
    def __init__(self, root: Path, allow_remote: bool) -> None:
        self.root = root
        self.allow_remote = allow_remote
        self.problems: list[str] = []
        self.seen: set[Path] = set()

    def rel(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix() or "."
        except ValueError:
            return str(path)

    def inside(self, path: Path) -> bool:
        try:
            Path(os.path.realpath(path)).relative_to(self.root)
        except ValueError:
            return False
        return True

    def reference(self, where: str, directory: Path, ref: object, field: str, *, dirs: bool) -> None:
        """Check one reference of the kustomization in ``directory``; a
        kustomization directory it names is checked in turn."""
        if not isinstance(ref, str) or not ref.strip():
            return
        if "\n" in ref:  # an inline patch or plugin configuration, not a path
            return
        ref = ref.strip()
        if looks_remote(ref) or ref.startswith("file:"):
            if self.allow_remote and not ref.startswith("file:"):
                return
            self.problems.append(f"{where}: {field} {ref!r}: remote bases and resources are not allowed "
                                 "(an administrator may allow them with KAPI_SYNC_KUSTOMIZE_REMOTE=1)"
                                 if not ref.startswith("file:") else
                                 f"{where}: {field} {ref!r}: file:// references are not allowed")
            return
        if os.path.isabs(ref):
            self.problems.append(f"{where}: {field} {ref!r}: absolute paths are not allowed")
            return
        target = directory / ref
        if not self.inside(target):
            self.problems.append(f"{where}: {field} {ref!r}: path leaves the repository")
            return
        if not target.exists():
            self.problems.append(f"{where}: {field} {ref!r}: not found in the repository")
            return
        if dirs and target.is_dir():
            self.kustomization(Path(os.path.realpath(target)), where, ref)

    def kustomization(self, directory: Path, parent: str | None = None, ref: str = "") -> None:
        if directory in self.seen:
            return
        self.seen.add(directory)
        if len(self.seen) > _MAX_KUSTOMIZATIONS:
            self.problems.append(f"more than {_MAX_KUSTOMIZATIONS} kustomizations")
            return
        file = _kustomization_file(directory)
        if file is None:
            if parent is not None:
                self.problems.append(f"{parent}: {ref!r}: directory has no kustomization.yaml")
            return
        where = self.rel(file)
        if not self.inside(file):
            self.problems.append(f"{where}: symlink points outside the repository")
            return
        if file.stat().st_size > _MAX_BYTES:
            self.problems.append(f"{where}: file is over the limit of {_MAX_BYTES} bytes")
            return
        try:
            doc = yaml.load(file.read_bytes(), Loader=_Loader)
        except (yaml.YAMLError, ValueError) as exc:
            self.problems.append(f"{where}: cannot parse: {' '.join(str(exc).split())}")
            return
        if not isinstance(doc, dict):
            self.problems.append(f"{where}: not an object")
            return
        self.fields(where, directory, doc)

    def fields(self, where: str, directory: Path, doc: dict) -> None:
        for field in _HELM:
            if doc.get(field):
                self.problems.append(f"{where}: {field}: Helm charts are not supported")
        for field in _PATH_LISTS:
            for ref in _items(doc.get(field)):
                self.reference(where, directory, ref, field, dirs=True)
        for ref in _items(doc.get("patchesStrategicMerge")):
            self.reference(where, directory, ref, "patchesStrategicMerge", dirs=False)
        for field in _PATH_OBJECTS:
            for item in _items(doc.get(field)):
                if isinstance(item, dict):
                    self.reference(where, directory, item.get("path"), f"{field}.path", dirs=False)
        for field in _GENERATORS:
            for gen in _items(doc.get(field)):
                if not isinstance(gen, dict):
                    continue
                for entry in _items(gen.get("files")):
                    if isinstance(entry, str):
                        # "key=path" or "path"
                        path = entry.partition("=")[2] if "=" in entry else entry
                        self.reference(where, directory, path, f"{field}.files", dirs=False)
                for entry in [*_items(gen.get("envs")), gen.get("env")]:
                    self.reference(where, directory, entry, f"{field}.envs", dirs=False)
        openapi = doc.get("openapi")
        if isinstance(openapi, dict):
            self.reference(where, directory, openapi.get("path"), "openapi.path", dirs=False)


def _items(value: object) -> list:
    return value if isinstance(value, list) else []


def precheck(root: Path, base: Path, allow_remote: bool | None = None) -> list[str]:
    """Problems of the kustomization in ``base`` and all it reaches ([] if none)."""
    checker = _Checker(Path(os.path.realpath(root)), remote_allowed() if allow_remote is None else allow_remote)
    checker.kustomization(Path(os.path.realpath(base)))
    return checker.problems


def build(root: Path, base: Path, deadline: float | None = None) -> tuple[list[str], bytes]:
    """``kubectl kustomize`` of ``base`` after ``precheck``: (problems, output);
    raises ``sandbox.SandboxTimeout`` when the time runs out."""
    network = remote_allowed()
    problems = precheck(root, base, network)
    if problems:
        return problems, b""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        return ["kubectl is not installed: cannot build kustomization"], b""
    rel = base.relative_to(root).as_posix() or "."
    try:
        done = sandbox.run([os.path.realpath(kubectl), "kustomize", "--load-restrictor",
                            "LoadRestrictionsRootOnly", str(base)], cwd=root, deadline=deadline,
                           network=network)
    except sandbox.SandboxTimeout:
        raise
    except sandbox.SandboxError as exc:
        return [f"kustomize build {rel}: {exc}"], b""
    if done.returncode != 0:
        return [f"kustomize build {rel}: {done.stderr.decode(errors='replace').strip()[-2000:]}"], b""
    return [], done.stdout
