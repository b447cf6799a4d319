"""Which local repositories a GitRepository's ``file://`` URL may name.

A ``file://`` URL reads the server's own disk, with the server's rights: left
open, a tenant's GitRepository could name another namespace's hosted
repository (``<data>/git/NS/NAME.git``) or its mirror of a private remote
(``<data>/sync/mirrors/...``) and have its Sync apply that tenant's manifests,
Secrets included. So a ``file://`` URL must resolve (symlinks followed) under a
directory an administrator lists in ``KAPI_SYNC_FILE_URL_ROOTS`` (none by
default), and never under kapi's data directory, even if a listed root holds
it. A repository whose ``.git`` file or ``objects/info/alternates`` points
elsewhere is held to the same rule for those paths.

A hosted repository of another namespace is not reachable at all: a Sync's
``spec.sourceRef`` names a GitRepository of its own namespace only, as Flux's
``--no-cross-namespace-refs``.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from kapi.runtime import config

__all__ = ["SourceRefused", "allowed_roots", "check_url"]


class SourceRefused(Exception):
    """The URL names a place this server does not let a GitRepository read."""


def allowed_roots() -> list[Path]:
    """The administrator's ``KAPI_SYNC_FILE_URL_ROOTS``, resolved."""
    from django.conf import settings

    roots = getattr(settings, "SYNC_FILE_URL_ROOTS", []) if settings.configured else []
    return [Path(os.path.realpath(r)) for r in roots]


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _check_path(path: Path, roots: list[Path], data: Path, shown: str) -> None:
    real = Path(os.path.realpath(path))
    if _under(real, data) or _under(data, real):
        raise SourceRefused(f"{shown} is inside kapi's data directory: a hosted repository of another "
                            "namespace cannot be read by file:// URL")
    if not any(_under(real, root) for root in roots):
        listed = ", ".join(str(r) for r in roots) or "none"
        raise SourceRefused(f"{shown} is not under a directory allowed for file:// URLs "
                            f"(KAPI_SYNC_FILE_URL_ROOTS: {listed})")


def check_url(url: str) -> None:
    """Raise ``SourceRefused`` unless ``url`` may be fetched; only ``file://``
    URLs are checked here (https and ssh reach other machines with the
    GitRepository's own credentials)."""
    if not url.lower().startswith("file:"):
        return
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost") or "%" in url or parts.query or parts.fragment:
        raise SourceRefused(f"file URL {url!r} must be file:///absolute/path")
    path = Path(parts.path)
    if not path.is_absolute():
        raise SourceRefused(f"file URL {url!r} must be file:///absolute/path")
    roots = allowed_roots()
    data = Path(os.path.realpath(config.data_dir()))
    _check_path(path, roots, data, url)
    # A work tree's ".git" file and a repository's alternates lead git elsewhere.
    real = Path(os.path.realpath(path))
    gitfile = real / ".git"
    if gitfile.is_file():
        text = gitfile.read_text(errors="replace").strip()
        if text.startswith("gitdir:"):
            target = Path(text.removeprefix("gitdir:").strip())
            _check_path(target if target.is_absolute() else real / target, roots, data, f"{url} (.git file)")
    for gitdir in (real, real / ".git"):
        alternates = gitdir / "objects" / "info" / "alternates"
        if alternates.is_file():
            for line in alternates.read_text(errors="replace").splitlines():
                if line.strip() and not line.startswith("#"):
                    target = Path(line.strip())
                    target = target if target.is_absolute() else gitdir / "objects" / target
                    _check_path(target, roots, data, f"{url} (objects/info/alternates)")
