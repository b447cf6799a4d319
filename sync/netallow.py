"""Which network addresses a tenant's URL may make kapi connect to.

A tenant must not turn kapi into a client for addresses only the server can
reach: an Alert's receiver (``sync.notify``) and a Sync's target API server
(``sync.kubeconfig``) are http(s) URLs whose host must not resolve to a
loopback, link-local (cloud metadata), unspecified or multicast address,
unless that address is in one of the networks the administrator allows
(a setting of comma-separated CIDRs).
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

__all__ = ["refused"]


def _networks(allowed: str) -> list:
    return [ipaddress.ip_network(n.strip(), strict=False) for n in allowed.split(",") if n.strip()]


def refused(url: str, allowed: str, who: str) -> str | None:
    """Why ``url`` may not be reached (``who``: "alerts", "a Sync"), or None.
    ``allowed``: the setting's comma-separated CIDRs."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "the address must be an http or https URL"
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        infos = socket.getaddrinfo(parts.hostname, port)
    except (OSError, UnicodeError, ValueError):
        return f"cannot resolve {parts.hostname}"
    networks = _networks(allowed)
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if any(address in net for net in networks):
            continue
        if address.is_loopback or address.is_link_local or address.is_unspecified or address.is_multicast:
            return f"{parts.hostname} resolves to {address}, which {who} may not reach"
    return None
