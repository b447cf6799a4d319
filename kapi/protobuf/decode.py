"""Protobuf object decoding: a ``application/vnd.kubernetes.protobuf`` body to JSON.

The body is the magic ``k8s\\x00`` followed by a ``runtime.Unknown`` envelope
(1 typeMeta {1 apiVersion, 2 kind}, 2 raw, 3 contentEncoding, 4 contentType)
whose ``raw`` is the object's message. The result is the dict a JSON client
would have sent for the same Go object, so everything after the parser is
unaware of the wire format. Message layouts come from ``kapi.protobuf.tables``;
their notation is in ``kapi.protobuf.schema``.

Fields that decode to JSON ``null`` (an unset ``metav1.Time``) are left out, since
the JSON decoder treats ``null`` and absent alike.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from kapi.protobuf.schema import SCALARS
from kapi.protobuf.tables import MESSAGES, message_for_kind
from kapi.protobuf.wire import (
    FIXED32,
    FIXED64,
    LENGTH_DELIMITED,
    VARINT,
    ProtobufError,
    iter_fields,
    to_signed32,
    to_signed64,
    unpack_fixed32s,
    unpack_fixed64s,
    unpack_varints,
)

__all__ = [
    "MAGIC",
    "ProtobufError",
    "decode_message",
    "decode_object",
    "format_go_duration",
]

MAGIC = b"k8s\x00"

# Kubernetes types are recursive only through RawExtension (which may hold
# another protobuf object) and CRD schemas (JSONSchemaProps); the bound keeps a
# crafted body from exhausting the stack.
_MAX_DEPTH = 128

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

_WIRE_TYPES = {
    "bool": VARINT,
    "int32": VARINT,
    "int64": VARINT,
    "uint32": VARINT,
    "uint64": VARINT,
    "sint32": VARINT,
    "sint64": VARINT,
    "fixed32": FIXED32,
    "sfixed32": FIXED32,
    "float": FIXED32,
    "fixed64": FIXED64,
    "sfixed64": FIXED64,
    "double": FIXED64,
    "string": LENGTH_DELIMITED,
    "bytes": LENGTH_DELIMITED,
}


def decode_object(body: bytes) -> dict[str, Any]:
    """Decode a Kubernetes protobuf body into the object's JSON form.

    Raises ``ProtobufError`` on a missing magic, a malformed message, an unknown
    (apiVersion, kind) or a non-empty ``contentEncoding``.
    """
    return _decode_object(body, 0)


def decode_message(data: bytes, name: str) -> Any:
    """Decode the bytes of message ``name`` (a table name such as ``core.v1.Pod``)."""
    if name not in MESSAGES:
        raise ProtobufError(f"unknown message {name}")
    return _message(data, name, 0)


def _decode_object(body: bytes, depth: int) -> dict[str, Any]:
    if not body.startswith(MAGIC):
        raise ProtobufError("body does not start with the Kubernetes protobuf magic")
    api_version = kind = content_encoding = ""
    raw = b""
    for number, wire_type, value in iter_fields(body[len(MAGIC) :]):
        if number == 1 and wire_type == LENGTH_DELIMITED:
            for sub, sub_type, sub_value in iter_fields(value):
                if sub_type != LENGTH_DELIMITED:
                    continue
                if sub == 1:
                    api_version = _text(sub_value)
                elif sub == 2:
                    kind = _text(sub_value)
        elif number == 2 and wire_type == LENGTH_DELIMITED:
            raw = value
        elif number == 3 and wire_type == LENGTH_DELIMITED:
            content_encoding = _text(value)
    if content_encoding:
        raise ProtobufError(f"unsupported contentEncoding {content_encoding!r}")
    if not api_version or not kind:
        raise ProtobufError("object has no apiVersion or kind")
    name = message_for_kind(api_version, kind)
    if name is None:
        raise ProtobufError(f"no protobuf schema for {kind} in {api_version}")
    obj = {"apiVersion": api_version, "kind": kind}
    obj.update(_message(raw, name, depth))
    return obj


def _message(data: bytes, name: str, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise ProtobufError("message nesting is too deep")
    table = MESSAGES[name]
    if isinstance(table, str):
        if table.startswith("[]"):
            # A Go named slice: the message's only field, items = 1, is the value.
            return _message_fields(data, {1: ("items", table)}, name, depth).get(
                "items", []
            )
        return _SPECIAL[table](data, depth)
    return _message_fields(data, table, name, depth)


def _message_fields(
    data: bytes, table: dict[int, tuple[str, str]], name: str, depth: int
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    inline: list[dict[str, Any]] = []
    for number, wire_type, value in iter_fields(data):
        field = table.get(number)
        if field is None:
            continue  # a newer field than our tables: skip, as Go's decoder does
        json_name, type_ = field
        if type_.startswith("[]"):
            out.setdefault(json_name, []).extend(
                _repeated(wire_type, value, type_[2:], name, json_name, depth)
            )
        elif type_.startswith("map["):
            key_type, _, value_type = type_[4:].partition("]")
            key, item = _map_entry(value, wire_type, key_type, value_type, depth)
            out.setdefault(json_name, {})[key] = item
        else:
            item = _single(wire_type, value, type_.lstrip("*"), name, json_name, depth)
            if json_name == "":
                inline.append(item)
            else:
                out[json_name] = item
    for json_name, type_ in table.values():
        # Go's omitempty: zero scalars of value fields, empty lists and maps, nulls.
        if json_name not in out:
            continue
        item = out[json_name]
        if (
            item is None
            or (type_ in SCALARS and not item)
            or type_.startswith(("[]", "map["))
            and not item
        ):
            del out[json_name]
    for fields in inline:
        out.update(fields)
    return out


def _single(
    wire_type: int, value: int | bytes, type_: str, name: str, field: str, depth: int
) -> Any:
    if type_ in SCALARS:
        return _scalar(wire_type, value, type_, name, field)
    if wire_type != LENGTH_DELIMITED:
        raise ProtobufError(f"{name}.{field}: expected a message")
    return _message(value, type_, depth + 1)


def _repeated(
    wire_type: int, value: int | bytes, type_: str, name: str, field: str, depth: int
) -> list[Any]:
    expected = _WIRE_TYPES.get(type_, LENGTH_DELIMITED)
    if wire_type == LENGTH_DELIMITED and expected != LENGTH_DELIMITED:
        # A packed run of scalars (proto3 style); Kubernetes writes them unpacked,
        # but the format allows either.
        if expected == VARINT:
            raw = unpack_varints(value)
        elif expected == FIXED32:
            raw = unpack_fixed32s(value)
        else:
            raw = unpack_fixed64s(value)
        return [_scalar(expected, item, type_, name, field) for item in raw]
    return [_single(wire_type, value, type_, name, field, depth)]


def _map_entry(
    data: int | bytes, wire_type: int, key_type: str, value_type: str, depth: int
) -> tuple[Any, Any]:
    if wire_type != LENGTH_DELIMITED:
        raise ProtobufError("map entry is not a message")
    key: Any = None
    item: Any = None
    for number, entry_type, value in iter_fields(data):
        if number == 1:
            key = _scalar(entry_type, value, key_type, "map", "key")
        elif number == 2:
            item = _single(entry_type, value, value_type, "map", "value", depth + 1)
    if key is None:
        key = _ZERO.get(key_type, "")
    if item is None:
        item = (
            _single(LENGTH_DELIMITED, b"", value_type, "map", "value", depth + 1)
            if value_type not in SCALARS
            else _ZERO.get(value_type, "")
        )
    if not isinstance(key, str):
        key = str(key).lower() if isinstance(key, bool) else str(key)
    return key, item


_ZERO: dict[str, Any] = {"bool": False, "bytes": "", "string": "", "double": 0.0}


def _scalar(
    wire_type: int, value: int | bytes, type_: str, name: str, field: str
) -> Any:
    if wire_type != _WIRE_TYPES[type_]:
        raise ProtobufError(f"{name}.{field}: wire type {wire_type} is not {type_}")
    if type_ == "string":
        return _text(value)
    if type_ == "bytes":
        return base64.b64encode(value).decode("ascii")
    if type_ == "bool":
        return value != 0
    if type_ == "int32":
        return to_signed32(value)
    if type_ in ("int64", "sfixed64"):
        return to_signed64(value)
    if type_ == "uint32":
        return value & 0xFFFFFFFF
    if type_ in ("sint32", "sint64"):
        return (value >> 1) ^ -(value & 1)
    if type_ == "sfixed32":
        return to_signed32(value)
    if type_ == "double":
        return struct.unpack("<d", value.to_bytes(8, "little"))[0]
    if type_ == "float":
        return struct.unpack("<f", value.to_bytes(4, "little"))[0]
    return value  # uint64, fixed32, fixed64


def _text(value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtobufError(f"invalid UTF-8 in string field: {exc}") from None


def _int_fields(data: bytes) -> dict[int, int]:
    return {n: v for n, t, v in iter_fields(data) if t == VARINT}


def _time(data: bytes, depth: int) -> str | None:
    # metav1.Time: an empty message is the zero time (JSON null); nanos are
    # dropped on purpose (time_proto.go), the JSON form has whole seconds.
    if not data:
        return None
    seconds = to_signed64(_int_fields(data).get(1, 0))
    return _format_time(seconds).strftime("%Y-%m-%dT%H:%M:%SZ")


def _micro_time(data: bytes, depth: int) -> str | None:
    if not data:
        return None
    fields = _int_fields(data)
    seconds = to_signed64(fields.get(1, 0))
    micros = to_signed32(fields.get(2, 0)) // 1000
    moment = _format_time(seconds) + timedelta(microseconds=micros)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _format_time(seconds: int) -> datetime:
    try:
        return _EPOCH + timedelta(seconds=seconds)
    except OverflowError:
        raise ProtobufError(f"time out of range: {seconds}") from None


def _duration(data: bytes, depth: int) -> str:
    return format_go_duration(to_signed64(_int_fields(data).get(1, 0)))


def format_go_duration(nanos: int) -> str:
    """Format nanoseconds as Go's ``time.Duration.String`` does (``1h0m0s``)."""
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    nanos = abs(nanos)
    if nanos < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if nanos >= size:
                return sign + _fraction(nanos, size) + unit
    seconds, frac = divmod(nanos, 1_000_000_000)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    text = _fraction(seconds * 1_000_000_000 + frac, 1_000_000_000) + "s"
    if hours or minutes:
        text = f"{minutes}m" + text
    if hours:
        text = f"{hours}h" + text
    return sign + text


def _fraction(value: int, unit: int) -> str:
    whole, rest = divmod(value, unit)
    if not rest:
        return str(whole)
    digits = str(rest).rjust(len(str(unit)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"


def _quantity(data: bytes, depth: int) -> str:
    text = ""
    for number, wire_type, value in iter_fields(data):
        if number == 1 and wire_type == LENGTH_DELIMITED:
            text = _text(value)
    return text or "0"


def _int_or_string(data: bytes, depth: int) -> int | str:
    kind, int_val, str_val = 0, 0, ""
    for number, wire_type, value in iter_fields(data):
        if number == 1 and wire_type == VARINT:
            kind = value
        elif number == 2 and wire_type == VARINT:
            int_val = to_signed32(value)
        elif number == 3 and wire_type == LENGTH_DELIMITED:
            str_val = _text(value)
    return str_val if kind == 1 else int_val


def _embedded_json(data: bytes, depth: int) -> Any:
    # FieldsV1 and RawExtension carry their value in field 1 (Raw), normally JSON;
    # a RawExtension written by a protobuf client may hold another protobuf object.
    raw = b""
    for number, wire_type, value in iter_fields(data):
        if number == 1 and wire_type == LENGTH_DELIMITED:
            raw = value
    if not raw:
        return None
    if raw.startswith(MAGIC):
        return _decode_object(raw, depth + 1)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ProtobufError(f"embedded JSON is invalid: {exc}") from None


_SCHEMA = "apiextensions.v1.JSONSchemaProps"


def _schema_parts(data: bytes, depth: int) -> tuple[Any, list[Any], int]:
    """(field 1 schema, field 2 items, field 1 varint) of a JSONSchemaPropsOr*."""
    first: Any = None
    items: list[Any] = []
    flag = 0
    for number, wire_type, value in iter_fields(data):
        if number == 1 and wire_type == VARINT:
            flag = value
        elif number == 1 and wire_type == LENGTH_DELIMITED:
            first = _message(value, _SCHEMA, depth + 1)
        elif number == 2 and wire_type == LENGTH_DELIMITED:
            items.append(value)
    return first, items, flag


def _schema_or_array(data: bytes, depth: int) -> Any:
    # Go: the list if it has items, else the schema (JSONSchemaPropsOrArray.MarshalJSON).
    schema, items, _ = _schema_parts(data, depth)
    if items:
        return [_message(item, _SCHEMA, depth + 1) for item in items]
    return schema


def _schema_or_bool(data: bytes, depth: int) -> Any:
    # {1 allows, 2 schema}: the schema if set, else the boolean.
    allows, schema = False, None
    for number, wire_type, value in iter_fields(data):
        if number == 1 and wire_type == VARINT:
            allows = value != 0
        elif number == 2 and wire_type == LENGTH_DELIMITED:
            schema = _message(value, _SCHEMA, depth + 1)
    return schema if schema is not None else allows


def _schema_or_string_array(data: bytes, depth: int) -> Any:
    schema, items, _ = _schema_parts(data, depth)
    if items:
        return [_text(item) for item in items]
    return schema


_SPECIAL: dict[str, Callable[[bytes, int], Any]] = {
    "duration": _duration,
    "intorstring": _int_or_string,
    "json": _embedded_json,
    "microtime": _micro_time,
    "quantity": _quantity,
    "schemaorarray": _schema_or_array,
    "schemaorbool": _schema_or_bool,
    "schemaorstringarray": _schema_or_string_array,
    "time": _time,
}
