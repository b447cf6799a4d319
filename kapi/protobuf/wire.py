"""Protobuf wire format: splitting a message into (field number, wire type, value).

Decoding only (``kapi.protobuf.encode`` writes its own fields). The
reader knows nothing about schemas; it yields raw fields and leaves their meaning
to ``kapi.protobuf.decode``. Every malformed input raises ``ProtobufError``, so a
truncated or corrupt body becomes a 400, never an ``IndexError``::

    ValueError
    └── ProtobufError
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

__all__ = [
    "FIXED32",
    "FIXED64",
    "LENGTH_DELIMITED",
    "VARINT",
    "ProtobufError",
    "iter_fields",
    "read_varint",
    "to_signed32",
    "to_signed64",
    "unpack_fixed32s",
    "unpack_fixed64s",
    "unpack_varints",
]

VARINT = 0
FIXED64 = 1
LENGTH_DELIMITED = 2
FIXED32 = 5

# Groups (wire types 3 and 4) were never used by Kubernetes; treat them as corrupt.
_MAX_VARINT_BYTES = 10


class ProtobufError(ValueError):
    """The body is not a valid protobuf encoding of a known Kubernetes object."""


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """Decode the base-128 varint at ``pos``; return (unsigned value, next position)."""
    result = 0
    shift = 0
    end = min(len(data), pos + _MAX_VARINT_BYTES)
    while pos < end:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result & 0xFFFFFFFFFFFFFFFF, pos
        shift += 7
    if pos >= len(data):
        raise ProtobufError("unexpected end of data in varint")
    raise ProtobufError("varint is longer than 10 bytes")


def to_signed64(value: int) -> int:
    """Reinterpret an unsigned 64-bit varint as a two's complement int64."""
    return value - (1 << 64) if value >= 1 << 63 else value


def to_signed32(value: int) -> int:
    """Reinterpret a varint as int32: negative int32s are sign-extended to 64 bits."""
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def iter_fields(data: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    """Yield ``(field number, wire type, value)`` for each field of a message.

    Varints are yielded unsigned, fixed-width values as their raw integer
    (little-endian, unsigned), length-delimited values as ``bytes``.
    """
    pos = 0
    size = len(data)
    while pos < size:
        key, pos = read_varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise ProtobufError("invalid field number 0")
        if wire_type == VARINT:
            value, pos = read_varint(data, pos)
            yield number, wire_type, value
        elif wire_type == LENGTH_DELIMITED:
            length, pos = read_varint(data, pos)
            end = pos + length
            if end > size:
                raise ProtobufError(f"field {number}: length {length} exceeds data")
            yield number, wire_type, data[pos:end]
            pos = end
        elif wire_type == FIXED64:
            if pos + 8 > size:
                raise ProtobufError(f"field {number}: unexpected end of data")
            yield number, wire_type, int.from_bytes(data[pos : pos + 8], "little")
            pos += 8
        elif wire_type == FIXED32:
            if pos + 4 > size:
                raise ProtobufError(f"field {number}: unexpected end of data")
            yield number, wire_type, int.from_bytes(data[pos : pos + 4], "little")
            pos += 4
        else:
            raise ProtobufError(f"field {number}: unsupported wire type {wire_type}")


def unpack_varints(data: bytes) -> list[int]:
    """Decode a packed repeated varint field (unsigned values)."""
    values = []
    pos = 0
    while pos < len(data):
        value, pos = read_varint(data, pos)
        values.append(value)
    return values


def unpack_fixed32s(data: bytes) -> list[int]:
    """Decode a packed repeated fixed32 field (unsigned values)."""
    if len(data) % 4:
        raise ProtobufError("packed fixed32 field has a partial element")
    return list(struct.unpack(f"<{len(data) // 4}I", data))


def unpack_fixed64s(data: bytes) -> list[int]:
    """Decode a packed repeated fixed64 field (unsigned values)."""
    if len(data) % 8:
        raise ProtobufError("packed fixed64 field has a partial element")
    return list(struct.unpack(f"<{len(data) // 8}Q", data))
