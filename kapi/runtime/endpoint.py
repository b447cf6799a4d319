"""Where ``serve`` listens and how clients reach it.

``serve --bind HOST:PORT`` is parsed here, and the address clients should use
(a wildcard bind is reached via loopback) is recorded in ``<data dir>/server.json``
so that ``kubeconfig`` prints the right URL for that data directory.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = [
    "DEFAULT_BIND",
    "Endpoint",
    "address_in_use",
    "parse_bind",
    "read_endpoint",
    "server_file",
    "write_endpoint",
]

DEFAULT_BIND = "127.0.0.1:6443"
_WILDCARDS = {"", "0.0.0.0", "::", "*"}


@dataclass(frozen=True)
class Endpoint:
    """A listening address and the URL clients use for it."""

    host: str
    port: int
    scheme: str = "https"

    @property
    def client_host(self) -> str:
        """The host to connect to: loopback for a wildcard bind."""
        if self.host in _WILDCARDS:
            return "::1" if self.host == "::" else "127.0.0.1"
        return self.host

    @property
    def url(self) -> str:
        host = self.client_host
        if ":" in host:
            host = f"[{host}]"
        return f"{self.scheme}://{host}:{self.port}"


def parse_bind(bind: str, *, scheme: str = "https") -> Endpoint:
    """``HOST:PORT``, ``[IPV6]:PORT``, ``:PORT`` (all interfaces) or ``HOST``."""
    bind = bind.strip()
    if bind.startswith("["):
        host, sep, rest = bind[1:].partition("]")
        if not sep:
            raise ValueError(f"invalid bind address {bind!r}")
        port_text = rest[1:] if rest.startswith(":") else ""
    elif bind.count(":") > 1:
        host, port_text = bind, ""  # a bare IPv6 address
    else:
        host, _, port_text = bind.partition(":")
    port = int(port_text) if port_text else int(DEFAULT_BIND.rsplit(":", 1)[1])
    if not 0 < port < 65536:
        raise ValueError(f"invalid port in bind address {bind!r}")
    return Endpoint(host or "0.0.0.0", port, scheme)


def server_file(data_dir: Path) -> Path:
    return data_dir / "server.json"


def write_endpoint(data_dir: Path, endpoint: Endpoint) -> None:
    """Record the endpoint (atomically) for ``kubeconfig`` and other tools."""
    path = server_file(data_dir)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({**asdict(endpoint), "url": endpoint.url}, indent=2))
    os.replace(tmp, path)


def read_endpoint(data_dir: Path) -> Endpoint | None:
    try:
        raw = json.loads(server_file(data_dir).read_text())
        return Endpoint(str(raw["host"]), int(raw["port"]), str(raw["scheme"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def address_in_use(host: str, port: int) -> str | None:
    """Why ``host:port`` cannot be served, if another socket holds it; else None.

    The API workers bind with ``SO_REUSEPORT`` (``kapi.runtime.apiserver``),
    and Linux lets a socket with that option join a port that another socket
    of the same user holds with it: a second ``serve`` on the same port would
    silently share the connections with the first (each client landing on
    either server at random). A plain bind, without ``SO_REUSEPORT``, fails on
    any port in use, as kube-apiserver's does. ``SO_REUSEADDR`` still lets a
    restarted server take its port back from connections in TIME_WAIT."""
    if not port:
        return None
    # As the server binds it: "::" is IPv6's wildcard (dual-stack, so it also
    # meets IPv4 holders); the others name IPv4's.
    host = "" if host in _WILDCARDS - {"::"} else host
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            shown = f"[{host}]" if ":" in host else host or "*"
            return f"cannot listen on {shown}:{port}: {error.strerror}"
    return None
