"""Reading kapi's protobuf answers back in tests.

The bytes are parsed with ``kapi.protobuf.decode``, the decoder that reads
kubectl's request bodies and is checked against bodies real kubectl (Go) wrote
(``tests/protobuf/fixtures``, ``test_decode.py``), not with the encoder under
test. Kubernetes' ``generated.proto`` files would be a more independent
reference, but they come only from Kubernetes' repositories, and fetched
source stays out of this one.
"""

from __future__ import annotations

import struct
from typing import Any

from kapi.protobuf.decode import decode_message
from kapi.protobuf.decode import decode_object as _decode
from kapi.protobuf.encode import _META_KINDS
from kapi.protobuf.wire import LENGTH_DELIMITED, ProtobufError, iter_fields

__all__ = ["MAGIC", "decode_object", "decode_watch_frames", "to_json"]

MAGIC = b"k8s\x00"


def decode_object(body: bytes) -> tuple[str, str, dict[str, Any]]:
    """Parse a ``k8s\\x00`` body: (apiVersion, kind, the rest of the object).
    Kinds no request body carries (Status, the meta.k8s.io transforms,
    discovery) are read with their meta/v1 message."""
    assert body[:4] == MAGIC, body[:16]
    try:
        obj = _decode(body)
    except ProtobufError:
        api_version, kind, raw = _envelope(body[4:])
        name = _META_KINDS.get((api_version, kind))
        if name is None:
            raise
        obj = decode_message(raw, name)
        return api_version, kind, obj
    return obj.pop("apiVersion"), obj.pop("kind"), obj


def _envelope(data: bytes) -> tuple[str, str, bytes]:
    """(apiVersion, kind, raw) of a ``runtime.Unknown``."""
    api_version = kind = ""
    raw = b""
    for number, wire_type, value in iter_fields(data):
        if number == 1 and wire_type == LENGTH_DELIMITED:
            for sub, _, sub_value in iter_fields(value):
                if sub == 1:
                    api_version = sub_value.decode()
                elif sub == 2:
                    kind = sub_value.decode()
        elif number == 2 and wire_type == LENGTH_DELIMITED:
            raw = value
    return api_version, kind, raw


def to_json(message: dict[str, Any]) -> dict[str, Any]:
    """The object's JSON form (the decoder already gives it)."""
    return message


def decode_watch_frames(data: bytes) -> tuple[list[tuple[str, bytes]], bytes]:
    """Split a protobuf watch stream into (type, object body) events.

    Each frame is a 4-byte big-endian length and a ``meta.v1.WatchEvent``
    (type = 1, object = 2, a ``runtime.RawExtension`` whose raw = 1); returns
    the events and the bytes of an incomplete last frame."""
    events = []
    while len(data) >= 4:
        (size,) = struct.unpack(">I", data[:4])
        if len(data) < 4 + size:
            break
        kind, raw = "", b""
        for number, wire_type, value in iter_fields(data[4 : 4 + size]):
            if number == 1 and wire_type == LENGTH_DELIMITED:
                kind = value.decode()
            elif number == 2 and wire_type == LENGTH_DELIMITED:
                for sub, sub_type, sub_value in iter_fields(value):
                    if sub == 1 and sub_type == LENGTH_DELIMITED:
                        raw = sub_value
        events.append((kind, raw))
        data = data[4 + size :]
    return events, data
