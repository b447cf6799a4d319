"""Protobuf object encoding: a JSON object to ``application/vnd.kubernetes.protobuf``.

The inverse of ``kapi.protobuf.decode``, for responses: the magic ``k8s\\x00``,
then a ``runtime.Unknown`` envelope (1 typeMeta {1 apiVersion, 2 kind}, 2 raw,
3 contentEncoding, 4 contentType) whose ``raw`` is the object's message, as
apimachinery's protobuf serializer writes it (``runtime/serializer/protobuf``).
Message layouts come from ``kapi.protobuf.tables``.

A field is written when the JSON object has it (and it is not ``null``), in
field-number order, scalars of repeated fields unpacked and map entries sorted
by key, as Kubernetes' generated marshallers do. A field the JSON object leaves
out is left out of the message, which a Go client decodes to the same zero
value the JSON decoder would give it; a pointer field the JSON has (``replicas:
0``, ``securityContext: {}``) is written, so it decodes to a non-nil pointer.
Keys the table does not know are dropped, as Go's JSON decoder drops them.

``encode_object`` raises ``NotMarshalable`` for a kind without a message (a
custom resource): the caller negotiates another encoding or answers 406, as
kube-apiserver's ``errNotMarshalable`` does.
"""

from __future__ import annotations

import base64
import binascii
import re
import struct
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import orjson

from kapi.protobuf.decode import MAGIC
from kapi.protobuf.schema import SCALARS
from kapi.protobuf.tables import MESSAGES, message_for_kind
from kapi.protobuf.wire import ProtobufError

__all__ = [
    "NotMarshalable",
    "encode_message",
    "encode_object",
    "encode_watch_event",
    "is_marshalable",
    "parse_go_duration",
]

# Kinds apimachinery registers outside any API group's tables: Status is
# "unversioned" (served as v1), the meta.k8s.io transforms as their own group.
_META_KINDS: dict[tuple[str, str], str] = {
    ("v1", "Status"): "meta.v1.Status",
    ("meta.k8s.io/v1", "Status"): "meta.v1.Status",
    ("meta.k8s.io/v1", "PartialObjectMetadata"): "meta.v1.PartialObjectMetadata",
    (
        "meta.k8s.io/v1",
        "PartialObjectMetadataList",
    ): "meta.v1.PartialObjectMetadataList",
    ("meta.k8s.io/v1beta1", "PartialObjectMetadata"): "meta.v1.PartialObjectMetadata",
    # v1beta1's list numbers its fields the other way round (items 1, metadata 2).
    (
        "meta.k8s.io/v1beta1",
        "PartialObjectMetadataList",
    ): "meta.v1beta1.PartialObjectMetadataList",
}
_EXTRA_MESSAGES = {
    "meta.v1beta1.PartialObjectMetadataList": {
        1: ("items", "[]meta.v1.PartialObjectMetadata"),
        2: ("metadata", "meta.v1.ListMeta"),
    },
}


class NotMarshalable(ProtobufError):
    """The object's kind has no protobuf message (a custom resource)."""


def _varint(value: int) -> bytes:
    value &= 0xFFFFFFFFFFFFFFFF  # negatives are ten-byte two's complement
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _key(number: int, wire_type: int) -> bytes:
    return _varint(number << 3 | wire_type)


def _delimited(number: int, payload: bytes) -> bytes:
    return _key(number, 2) + _varint(len(payload)) + payload


def message_name(api_version: str, kind: str) -> str | None:
    """The message of ``kind`` in ``api_version``, or None (a custom resource)."""
    return _META_KINDS.get((api_version, kind)) or message_for_kind(api_version, kind)


def is_marshalable(api_version: str, kind: str) -> bool:
    """Whether objects of this kind can be answered as protobuf."""
    return message_name(api_version, kind) is not None


def encode_object(obj: dict[str, Any]) -> bytes:
    """Encode an object with ``apiVersion`` and ``kind`` as a Kubernetes protobuf body.

    Raises ``NotMarshalable`` when the kind has no message, ``ProtobufError`` when
    a value does not fit its field (a string where a number belongs).
    """
    api_version = obj.get("apiVersion") or ""
    kind = obj.get("kind") or ""
    name = (
        message_name(api_version, kind)
        if isinstance(api_version, str) and isinstance(kind, str)
        else None
    )
    if name is None:
        raise NotMarshalable(
            f"object {api_version}, Kind={kind} does not implement the protobuf "
            "marshalling interface and cannot be encoded to a protobuf message"
        )
    raw = _message(obj, name, 0)
    type_meta = _delimited(1, api_version.encode()) + _delimited(2, kind.encode())
    # contentEncoding and contentType are written empty, as Go's marshaller does.
    unknown = _delimited(1, type_meta) + _delimited(2, raw) + b"\x1a\x00\x22\x00"
    return MAGIC + unknown


def encode_message(value: Any, name: str) -> bytes:
    """Encode ``value`` (the JSON form) as message ``name`` (``core.v1.Pod``)."""
    if name not in MESSAGES and name not in _EXTRA_MESSAGES:
        raise ProtobufError(f"unknown message {name}")
    return _message(value, name, 0)


def encode_watch_event(event_type: str, obj: bytes) -> bytes:
    """One watch frame: a big-endian length, then ``WatchEvent`` {1 type, 2 object
    {1 raw}}, as the protobuf stream serializer and ``LengthDelimitedFramer`` write it.
    ``obj`` is the already encoded object (magic and envelope included)."""
    event = _delimited(1, event_type.encode()) + _delimited(2, _delimited(1, obj))
    return struct.pack(">I", len(event)) + event


_MAX_DEPTH = 64


def _message(value: Any, name: str, depth: int) -> bytes:
    if depth > _MAX_DEPTH:
        raise ProtobufError("object nesting is too deep")
    table = _EXTRA_MESSAGES.get(name) or MESSAGES[name]
    if isinstance(table, str):
        if table.startswith("[]"):
            # A Go named slice: one repeated field, items = 1.
            return _field(1, value, table, name, depth)
        return _SPECIAL[table](value, name)
    if not isinstance(value, dict):
        raise ProtobufError(f"{name}: expected an object, got {type(value).__name__}")
    out = bytearray()
    for number in sorted(table):
        json_name, type_ = table[number]
        if json_name == "":
            # An embedded Go struct: its fields sit in this very JSON object.
            out += _delimited(number, _message(value, type_, depth + 1))
            continue
        item = value.get(json_name)
        if item is None:
            continue
        out += _field(number, item, type_, f"{name}.{json_name}", depth)
    return bytes(out)


def _field(number: int, value: Any, type_: str, where: str, depth: int) -> bytes:
    if type_.startswith("[]"):
        if not isinstance(value, list):
            raise ProtobufError(f"{where}: expected a list")
        item_type = type_[2:]
        return b"".join(
            _single(number, item, item_type, where, depth)
            for item in value
            if item is not None
        )
    if type_.startswith("map["):
        if not isinstance(value, dict):
            raise ProtobufError(f"{where}: expected an object")
        key_type, _, value_type = type_[4:].partition("]")
        out = bytearray()
        # Kubernetes' marshallers write map entries sorted by key.
        for key in sorted(value):
            item = value[key]
            entry = _single(1, key, key_type, where, depth)
            if item is not None:
                entry += _single(2, item, value_type, where, depth)
            out += _delimited(number, entry)
        return bytes(out)
    return _single(number, value, type_.lstrip("*"), where, depth)


def _single(number: int, value: Any, type_: str, where: str, depth: int) -> bytes:
    if type_ in SCALARS:
        return _scalar(number, value, type_, where)
    return _delimited(number, _message(value, type_, depth + 1))


def _scalar(number: int, value: Any, type_: str, where: str) -> bytes:
    if type_ == "string":
        if not isinstance(value, str):
            raise ProtobufError(f"{where}: expected a string")
        return _delimited(number, value.encode("utf-8", "surrogatepass"))
    if type_ == "bytes":
        if not isinstance(value, str):
            raise ProtobufError(f"{where}: expected base64 text")
        try:
            return _delimited(number, base64.b64decode(value, validate=True))
        except (binascii.Error, ValueError):
            raise ProtobufError(f"{where}: invalid base64") from None
    if type_ == "bool":
        if not isinstance(value, bool):
            raise ProtobufError(f"{where}: expected a boolean")
        return _key(number, 0) + (b"\x01" if value else b"\x00")
    if type_ in ("double", "float"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ProtobufError(f"{where}: expected a number")
        if type_ == "double":
            return _key(number, 1) + struct.pack("<d", value)
        return _key(number, 5) + struct.pack("<f", value)
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ProtobufError(f"{where}: expected an integer")
    if type_ in ("sint32", "sint64"):
        return _key(number, 0) + _varint((value << 1) ^ (value >> 63))
    if type_ in ("fixed32", "sfixed32"):
        return _key(number, 5) + struct.pack("<I", value & 0xFFFFFFFF)
    if type_ in ("fixed64", "sfixed64"):
        return _key(number, 1) + struct.pack("<Q", value & 0xFFFFFFFFFFFFFFFF)
    return _key(number, 0) + _varint(value)  # int32, int64, uint32, uint64


# -- types with their own JSON form ---------------------------------------------------
_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$"
)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _parse_time(value: Any, where: str) -> tuple[int, int]:
    if not isinstance(value, str):
        raise ProtobufError(f"{where}: expected an RFC 3339 time")
    match = _RFC3339.match(value)
    if match is None:
        raise ProtobufError(f"{where}: invalid time {value!r}")
    year, month, day, hour, minute, second, frac, zone = match.groups()
    try:
        moment = datetime.fromisoformat(
            f"{year}-{month}-{day}T{hour}:{minute}:{second}"
        )
    except ValueError:
        raise ProtobufError(f"{where}: invalid time {value!r}") from None
    offset = 0
    if zone not in ("Z", "z"):
        sign = -1 if zone[0] == "-" else 1
        offset = sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    seconds = int((moment.replace(tzinfo=UTC) - _EPOCH).total_seconds()) - offset
    nanos = int((frac or "0").ljust(9, "0"))
    return seconds, nanos


def _time(value: Any, where: str) -> bytes:
    # metav1.Time is a Timestamp {1 seconds, 2 nanos}; the JSON form has whole
    # seconds and Go writes nanos as 0 (time_proto.go).
    seconds, _ = _parse_time(value, where)
    return _key(1, 0) + _varint(seconds) + b"\x10\x00"


def _micro_time(value: Any, where: str) -> bytes:
    seconds, nanos = _parse_time(value, where)
    nanos -= nanos % 1000  # MicroTime keeps microseconds
    return _key(1, 0) + _varint(seconds) + _key(2, 0) + _varint(nanos)


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_UNIT_NANOS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "μs": 1_000,
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}


def parse_go_duration(text: str) -> int:
    """Nanoseconds of a Go duration string (``1h0m0s``, ``-1.5s``, ``300ms``)."""
    body = text
    sign = 1
    if body[:1] in ("+", "-"):
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    if body == "0":
        return 0
    total = 0
    pos = 0
    while pos < len(body):
        match = _DURATION_PART.match(body, pos)
        if match is None:
            raise ProtobufError(f"invalid duration {text!r}")
        number, unit = match.groups()
        whole, _, frac = number.partition(".")
        size = _UNIT_NANOS[unit]
        total += int(whole or "0") * size
        if frac:
            total += int(frac) * size // 10 ** len(frac)
        pos = match.end()
    if not body:
        raise ProtobufError(f"invalid duration {text!r}")
    return sign * total


def _duration(value: Any, where: str) -> bytes:
    if not isinstance(value, str):
        raise ProtobufError(f"{where}: expected a duration")
    return _key(1, 0) + _varint(parse_go_duration(value))


def _quantity(value: Any, where: str) -> bytes:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ProtobufError(f"{where}: expected a quantity")
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    return _delimited(1, text.encode())


def _int_or_string(value: Any, where: str) -> bytes:
    # Go writes all three fields: type (0 int, 1 string), intVal, strVal.
    if isinstance(value, str):
        return b"\x08\x01\x10\x00" + _delimited(
            3, value.encode("utf-8", "surrogatepass")
        )
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProtobufError(f"{where}: expected an integer or a string")
    return b"\x08\x00" + _key(2, 0) + _varint(value) + b"\x1a\x00"


def _embedded_json(value: Any, where: str) -> bytes:
    # FieldsV1 and RawExtension hold their value as JSON bytes in field 1 (Raw).
    return _delimited(1, orjson.dumps(value))


_SPECIAL: dict[str, Callable[[Any, str], bytes]] = {
    "duration": _duration,
    "intorstring": _int_or_string,
    "json": _embedded_json,
    "microtime": _micro_time,
    "quantity": _quantity,
    "time": _time,
}
