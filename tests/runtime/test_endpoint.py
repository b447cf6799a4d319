"""Bind addresses, client URLs, the data-dir option and the Redis socket path."""

from __future__ import annotations

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
