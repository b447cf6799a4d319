"""The wire reader splits messages into fields and rejects malformed input."""

from __future__ import annotations

import pytest

from kapi.protobuf.wire import (
    FIXED32,
    FIXED64,
    LENGTH_DELIMITED,
    VARINT,
    ProtobufError,
    iter_fields,
    read_varint,
    to_signed32,
    to_signed64,
    unpack_fixed32s,
    unpack_fixed64s,
    unpack_varints,
)
from tests.protobuf import encoder


@pytest.mark.parametrize(
    ("data", "value"),
    [
        (b"\x00", 0),
        (b"\x01", 1),
        (b"\x7f", 127),
        (b"\x80\x01", 128),
        (b"\xac\x02", 300),
        (b"\xff\xff\xff\xff\x0f", 0xFFFFFFFF),
        (b"\xff" * 9 + b"\x01", (1 << 64) - 1),
    ],
)
def test_read_varint(data: bytes, value: int) -> None:
    """Varints decode little-endian base 128 and report where they end."""
    assert read_varint(data, 0) == (value, len(data))


def test_negative_int32_and_int64() -> None:
    """Negative int32 and int64 are ten-byte varints read as two's complement."""
    [(_, _, raw)] = list(iter_fields(encoder.varint(1, -5)))
    assert len(encoder.varint(1, -5)) == 11
    assert to_signed64(raw) == -5
    assert to_signed32(raw) == -5
    assert to_signed32(2**31 - 1) == 2**31 - 1
    assert to_signed64(2**63) == -(2**63)


def test_iter_fields_all_wire_types() -> None:
    """Each field comes back with its number, wire type and raw value."""
    data = (
        encoder.varint(1, 150)
        + encoder.string(2, "hi")
        + encoder.fixed32(3, 1.5)
        + encoder.fixed64(4, 2.5)
        + encoder.varint(1000, 1)
    )
    fields = list(iter_fields(data))
    assert [(n, t) for n, t, _ in fields] == [
        (1, VARINT),
        (2, LENGTH_DELIMITED),
        (3, FIXED32),
        (4, FIXED64),
        (1000, VARINT),
    ]
    assert fields[0][2] == 150
    assert fields[1][2] == b"hi"


def test_packed_scalars() -> None:
    """Packed runs unpack to their elements."""
    assert unpack_varints(b"\x01\xac\x02\x00") == [1, 300, 0]
    assert unpack_fixed32s(b"\x01\x00\x00\x00\x02\x00\x00\x00") == [1, 2]
    assert unpack_fixed64s(b"\x03" + b"\x00" * 7) == [3]
    with pytest.raises(ProtobufError):
        unpack_fixed32s(b"\x01\x00")


@pytest.mark.parametrize(
    "data",
    [
        b"\x80",  # varint key cut short
        b"\x08",  # varint value missing
        b"\x08\x80",  # varint value cut short
        b"\x12\x05abc",  # length beyond the data
        b"\x1d\x00\x00",  # fixed32 cut short
        b"\x21\x00",  # fixed64 cut short
        b"\x0b",  # group start: wire type 3 is not supported
        b"\x00\x00",  # field number 0
        b"\x08" + b"\xff" * 11,  # varint longer than 10 bytes
    ],
)
def test_malformed_input_raises_protobuf_error(data: bytes) -> None:
    """Truncated or corrupt input raises ProtobufError, never IndexError."""
    with pytest.raises(ProtobufError):
        list(iter_fields(data))
