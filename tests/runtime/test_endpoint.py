"""Bind addresses, client URLs, the data-dir option and the Redis socket path."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from kapi.runtime import config, endpoint


@pytest.mark.parametrize(
    ("bind", "host", "port", "url"),
    [
        ("127.0.0.1:6443", "127.0.0.1", 6443, "https://127.0.0.1:6443"),
        ("0.0.0.0:8443", "0.0.0.0", 8443, "https://127.0.0.1:8443"),
        (":7443", "0.0.0.0", 7443, "https://127.0.0.1:7443"),
        ("[::1]:6443", "::1", 6443, "https://[::1]:6443"),
        ("[::]:6443", "::", 6443, "https://[::1]:6443"),
        ("localhost", "localhost", 6443, "https://localhost:6443"),
    ],
)
def test_parse_bind(bind: str, host: str, port: int, url: str) -> None:
    ep = endpoint.parse_bind(bind)
    assert (ep.host, ep.port, ep.url) == (host, port, url)


def test_parse_bind_rejects_bad_port() -> None:
    with pytest.raises(ValueError):
        endpoint.parse_bind("127.0.0.1:70000")


def test_endpoint_round_trips(tmp_path: Path) -> None:
    ep = endpoint.parse_bind("127.0.0.1:1234", scheme="http")
    endpoint.write_endpoint(tmp_path, ep)
    assert endpoint.read_endpoint(tmp_path) == ep
    assert endpoint.read_endpoint(tmp_path / "missing") is None


def test_redis_socket_fits_in_sun_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deep data dir moves the socket to a short, stable path."""
    deep = tmp_path / ("d" * 120)
    monkeypatch.setenv("KAPI_DATA_DIR", str(deep))
    sock = config.embedded_redis_socket()
    assert len(str(sock)) < 100
    assert sock == config.embedded_redis_socket()
    monkeypatch.setenv("KAPI_DATA_DIR", str(tmp_path))
    assert config.embedded_redis_socket() == tmp_path.resolve() / "redis" / "redis.sock"


@pytest.mark.parametrize("style", ["separate", "equals"])
def test_manage_py_applies_data_dir_before_settings(tmp_path: Path, style: str) -> None:
    """--data-dir X and --data-dir=X both reach the settings (KAPI_DATA_DIR)."""
    root = Path(__file__).resolve().parents[2]
    args = (
        ["--data-dir", str(tmp_path)]
        if style == "separate"
        else [f"--data-dir={tmp_path}"]
    )
    code = (
        "import sys, manage; sys.argv = ['manage.py', 'x', *sys.argv[1:]];"
        "manage._apply_data_dir(sys.argv[1:]);"
        "from kapi.runtime import config; print(config.data_dir())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert out == str(tmp_path.resolve())


def _listening(family: int, host: str, v6only: bool = False, reuse_port: bool = False) -> socket.socket:
    sock = socket.socket(family, socket.SOCK_STREAM)
    if v6only:
        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    if reuse_port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, 0))
    sock.listen()
    return sock


def test_address_in_use_sees_what_the_server_would_bind_over() -> None:
    """serve's check before its SO_REUSEPORT bind (which would share a port
    with a socket that has the option): any listener on the port stops it,
    wildcards included, IPv6's too; a free port does not."""
    with _listening(socket.AF_INET, "127.0.0.1") as held:
        port = held.getsockname()[1]
        assert endpoint.address_in_use("127.0.0.1", port) == (
            f"cannot listen on 127.0.0.1:{port}: Address already in use"
        )
        assert endpoint.address_in_use("0.0.0.0", port) is not None
        assert endpoint.address_in_use("::", port) is not None  # dual-stack
    assert endpoint.address_in_use("127.0.0.1", port) is None
    with _listening(socket.AF_INET6, "::", v6only=True) as held:
        port = held.getsockname()[1]
        assert endpoint.address_in_use("::", port) == f"cannot listen on [::]:{port}: Address already in use"
    with _listening(socket.AF_INET, "127.0.0.1", reuse_port=True) as held:
        # A running server's sockets have SO_REUSEPORT; the check sees them.
        assert endpoint.address_in_use("127.0.0.1", held.getsockname()[1]) is not None
