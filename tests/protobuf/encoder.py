"""A minimal protobuf encoder for tests, written independently of the decoder.

Builds wire-format bytes field by field, so unit tests can state exactly what is
on the wire (zero values, packed runs, unknown fields, truncations).
"""

from __future__ import annotations

import struct

__all__ = ["envelope", "fixed32", "fixed64", "message", "packed", "string", "varint"]


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative numbers are ten-byte two's complement
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(number: int, wire_type: int) -> bytes:
    return _varint(number << 3 | wire_type)


def varint(number: int, value: int) -> bytes:
    return _key(number, 0) + _varint(value)


def string(number: int, value: str | bytes) -> bytes:
    data = value.encode() if isinstance(value, str) else value
    return _key(number, 2) + _varint(len(data)) + data


def message(number: int, *fields: bytes) -> bytes:
    return string(number, b"".join(fields))


def packed(number: int, values: list[int]) -> bytes:
    return string(number, b"".join(_varint(v) for v in values))


def fixed32(number: int, value: float) -> bytes:
    return _key(number, 5) + struct.pack("<f", value)


def fixed64(number: int, value: float) -> bytes:
    return _key(number, 1) + struct.pack("<d", value)


def envelope(api_version: str, kind: str, *fields: bytes, encoding: str = "") -> bytes:
    """A whole request body: magic, then runtime.Unknown around the object."""
    unknown = message(1, string(1, api_version), string(2, kind)) + string(
        2, b"".join(fields)
    )
    if encoding:
        unknown += string(3, encoding)
    return b"k8s\x00" + unknown
