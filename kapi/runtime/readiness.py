"""Probing the API server's ``/readyz`` from ``serve`` (and the test fixture)."""

from __future__ import annotations

import http.client
import ssl
import urllib.error
import urllib.request
from pathlib import Path

__all__ = ["probe_ready"]


def probe_ready(url: str, *, ca_file: Path | None = None, timeout: float = 2) -> bool:
    """True if ``GET <url>/readyz`` answers 200.

    The certificate is verified against kapi's own CA: a ready line must mean
    that a client with the kubeconfig can connect.
    """
    context = None
    if url.startswith("https:"):
        context = ssl.create_default_context(cafile=str(ca_file) if ca_file else None)
    try:
        with urllib.request.urlopen(
            url.rstrip("/") + "/readyz", timeout=timeout, context=context
        ) as response:
            return response.status == 200
    except urllib.error.HTTPError:
        return False
    except (OSError, http.client.HTTPException):
        return False
