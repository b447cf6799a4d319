"""ProtobufParser hands DRF the decoded object, a 400 on bad bodies, 413 on big ones."""

from __future__ import annotations

import io
import os
from pathlib import Path

import django
import pytest

# DRF's parsers module reads settings on import; no database is touched.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
django.setup()

from rest_framework.exceptions import ParseError  # noqa: E402 (after django.setup())

from kapi.api.protobuf_parser import ProtobufParser  # noqa: E402 (after django.setup())
from kapi.errors import StatusError  # noqa: E402 (after django.setup())

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "configmap.bin"


def test_parses_a_kubectl_body() -> None:
    """The parser returns the decoded JSON object."""
    obj = ProtobufParser().parse(io.BytesIO(FIXTURE.read_bytes()))
    assert obj["kind"] == "ConfigMap"
    assert obj["data"] == {"a": "b", "empty": ""}


def test_malformed_body_is_a_parse_error() -> None:
    """Decoding errors become DRF ParseError (400 BadRequest)."""
    with pytest.raises(ParseError, match="magic"):
        ProtobufParser().parse(io.BytesIO(b"not protobuf"))


def test_body_over_3_mib_is_rejected() -> None:
    """Bodies beyond 3 MiB raise 413 before anything is decoded."""
    with pytest.raises(StatusError) as info:
        ProtobufParser().parse(io.BytesIO(b"k8s\x00" + b"\x00" * (3 * 1024 * 1024)))
    assert info.value.code == 413
    assert info.value.status["message"] == "Request entity too large: limit is 3145728"
