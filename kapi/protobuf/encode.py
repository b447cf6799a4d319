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
import functools
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
    # legacy discovery (/api, /apis, /apis/GROUP, /api/v1, /apis/GROUP/VERSION)
    ("", "APIVersions"): "meta.v1.APIVersions",  # /api names no apiVersion, as kube's
    ("v1", "APIGroupList"): "meta.v1.APIGroupList",
    ("v1", "APIGroup"): "meta.v1.APIGroup",
    ("v1", "APIResourceList"): "meta.v1.APIResourceList",
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
    if not -0x8000000000000000 <= value <= 0xFFFFFFFFFFFFFFFF:
        raise ProtobufError(f"integer {value} does not fit 64 bits")
    value &= 0xFFFFFFFFFFFFFFFF  # negatives are ten-byte two's complement
    if value < 0x80:
        return bytes((value,))
    if value < 0x4000:  # the lengths of most nested messages
        return bytes(((value & 0x7F) | 0x80, value >> 7))
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


# CRD schemas (JSONSchemaProps) nest; JSON bodies are refused past 100 levels,
# which is under 128 messages deep.
_MAX_DEPTH = 128

# Each message is compiled once into a list of field encoders with their keys
# precomputed: the per-object work is then dict lookups and byte joins, with no
# parsing of the table's type strings (several times faster than walking it).
FieldEncoder = Callable[[Any, int], bytes]
_SMALL = [bytes((n,)) for n in range(128)]


def _length(n: int) -> bytes:
    return _SMALL[n] if n < 128 else _varint(n)


def _message(value: Any, name: str, depth: int) -> bytes:
    return _message_encoder(name)(value, depth)


@functools.cache
def _message_encoder(name: str) -> FieldEncoder:
    """A function encoding the JSON form of message ``name`` (its body, no key)."""
    table = _EXTRA_MESSAGES.get(name) or MESSAGES[name]
    if isinstance(table, str):
        if table.startswith("[]"):
            # A Go named slice: one repeated field, items = 1.
            return _field_encoder(1, table, name)
        if table in _NESTING:
            return _NESTING[table]
        special = _SPECIAL[table]
        return lambda value, depth: special(value, name)
    fields: list[tuple[str, FieldEncoder]] = []
    for number in sorted(table):
        json_name, type_ = table[number]
        if json_name == "":
            # An embedded Go struct: its fields sit in this very JSON object.
            fields.append(("", _submessage_encoder(number, type_)))
        elif json_name == "items" and name.endswith("List") and _stored(type_[2:]):
            fields.append((json_name, _list_items_encoder(number, type_[2:])))
        else:
            fields.append(
                (json_name, _field_encoder(number, type_, f"{name}.{json_name}"))
            )

    def encode(value: Any, depth: int) -> bytes:
        if depth > _MAX_DEPTH:
            raise ProtobufError("object nesting is too deep")
        if not isinstance(value, dict):
            raise ProtobufError(
                f"{name}: expected an object, got {type(value).__name__}"
            )
        parts = []
        get = value.get
        for json_name, field in fields:
            if not json_name:
                parts.append(field(value, depth))
                continue
            item = get(json_name)
            if item is not None:
                parts.append(field(item, depth))
        return b"".join(parts)

    return encode


# A list's items are stored objects, and a stored object never changes under
# the same uid and resourceVersion: informers relist the same objects again and
# again, so each item's bytes are kept (per message, since a transform such as
# PartialObjectMetadata encodes the same object differently). Bounded by bytes;
# cleared when full (a plain dict: views run on several threads).
_ITEM_CACHE: dict[tuple[str, str, str], bytes] = {}
_ITEM_CACHE_LIMIT = 32 * 1024 * 1024
_item_cache_bytes = 0


def _stored(type_: str) -> bool:
    table = MESSAGES.get(type_)
    return isinstance(table, dict) and table.get(1) == (
        "metadata",
        "meta.v1.ObjectMeta",
    )


def _list_items_encoder(number: int, type_: str) -> FieldEncoder:
    single = _submessage_encoder(number, type_)

    def items(value: Any, depth: int) -> bytes:
        global _item_cache_bytes
        if not isinstance(value, list):
            raise ProtobufError(f"{type_}List.items: expected a list")
        parts = []
        for item in value:
            meta = item.get("metadata") if isinstance(item, dict) else None
            uid = meta.get("uid") if isinstance(meta, dict) else None
            version = meta.get("resourceVersion") if uid else None
            if not (isinstance(uid, str) and isinstance(version, str) and version):
                if item is not None:
                    parts.append(single(item, depth))
                continue
            key = (type_, uid, version)
            data = _ITEM_CACHE.get(key)
            if data is None:
                data = single(item, depth)
                if _item_cache_bytes + len(data) > _ITEM_CACHE_LIMIT:
                    _ITEM_CACHE.clear()
                    _item_cache_bytes = 0
                _ITEM_CACHE[key] = data
                _item_cache_bytes += len(data)
            parts.append(data)
        return b"".join(parts)

    return items


def _field_encoder(number: int, type_: str, where: str) -> FieldEncoder:
    if type_.startswith("[]"):
        single = _single_encoder(number, type_[2:], where)
        # A JSON value may be null (a CRD enum allowing null); anything else may not.
        keep_nulls = MESSAGES.get(type_[2:]) == "json"

        def repeated(value: Any, depth: int) -> bytes:
            if not isinstance(value, list):
                raise ProtobufError(f"{where}: expected a list")
            return b"".join(
                [
                    single(item, depth)
                    for item in value
                    if item is not None or keep_nulls
                ]
            )

        return repeated
    if type_.startswith("map["):
        key_type, _, value_type = type_[4:].partition("]")
        key_encoder = _single_encoder(1, key_type, where)
        value_encoder = _single_encoder(2, value_type, where)
        tag = _key(number, 2)

        def map_(value: Any, depth: int) -> bytes:
            if not isinstance(value, dict):
                raise ProtobufError(f"{where}: expected an object")
            parts = []
            # Kubernetes' marshallers write map entries sorted by key.
            for key in sorted(value):
                item = value[key]
                entry = key_encoder(key, depth)
                if item is not None:
                    entry += value_encoder(item, depth)
                parts.append(tag + _length(len(entry)) + entry)
            return b"".join(parts)

        return map_
    return _single_encoder(number, type_.lstrip("*"), where)


def _single_encoder(number: int, type_: str, where: str) -> FieldEncoder:
    if type_ in SCALARS:
        return _scalar_encoder(number, type_, where)
    return _submessage_encoder(number, type_)


def _submessage_encoder(number: int, type_: str) -> FieldEncoder:
    tag = _key(number, 2)
    resolved: list[FieldEncoder] = []  # filled on first use: messages nest

    def submessage(value: Any, depth: int) -> bytes:
        if not resolved:
            resolved.append(_message_encoder(type_))
        body = resolved[0](value, depth + 1)
        return tag + _length(len(body)) + body

    return submessage


def _scalar_encoder(number: int, type_: str, where: str) -> FieldEncoder:
    if type_ == "string":
        tag = _key(number, 2)

        def string(value: Any, depth: int) -> bytes:
            if not isinstance(value, str):
                raise ProtobufError(f"{where}: expected a string")
            data = value.encode("utf-8", "surrogatepass")
            return tag + _length(len(data)) + data

        return string
    if type_ == "bool":
        true, false = _key(number, 0) + b"\x01", _key(number, 0) + b"\x00"

        def boolean(value: Any, depth: int) -> bytes:
            if value is True:
                return true
            if value is False:
                return false
            raise ProtobufError(f"{where}: expected a boolean")

        return boolean
    if type_ in ("int32", "int64", "uint32", "uint64"):
        tag = _key(number, 0)

        def integer(value: Any, depth: int) -> bytes:
            if value.__class__ is not int:
                value = _integer(value, where)
            return tag + (_SMALL[value] if 0 <= value < 128 else _varint(value))

        return integer
    return lambda value, depth: _scalar(number, value, type_, where)


def _integer(value: Any, where: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise ProtobufError(f"{where}: expected an integer")


def _scalar(number: int, value: Any, type_: str, where: str) -> bytes:
    if type_ == "bytes":
        if not isinstance(value, str):
            raise ProtobufError(f"{where}: expected base64 text")
        try:
            return _delimited(number, base64.b64decode(value, validate=True))
        except (binascii.Error, ValueError):
            raise ProtobufError(f"{where}: invalid base64") from None
    if type_ in ("double", "float"):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ProtobufError(f"{where}: expected a number")
        if type_ == "double":
            return _key(number, 1) + struct.pack("<d", value)
        return _key(number, 5) + struct.pack("<f", value)
    value = _integer(value, where)
    if type_ in ("sint32", "sint64"):
        return _key(number, 0) + _varint((value << 1) ^ (value >> 63))
    if type_ in ("fixed32", "sfixed32"):
        return _key(number, 5) + struct.pack("<I", value & 0xFFFFFFFF)
    return _key(number, 1) + struct.pack("<Q", value & 0xFFFFFFFFFFFFFFFF)


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
    if not isinstance(value, str):
        raise ProtobufError(f"{where}: expected an RFC 3339 time")
    return _time_bytes(value, where)


@functools.lru_cache(maxsize=4096)
def _time_bytes(value: str, where: str) -> bytes:
    # metav1.Time is a Timestamp {1 seconds, 2 nanos}; the JSON form has whole
    # seconds and Go writes nanos as 0 (time_proto.go). Cached: an object's
    # creation and managedFields times, and a list's, are mostly the same few.
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
    try:
        return _delimited(1, orjson.dumps(value))
    except orjson.JSONEncodeError as exc:  # an integer past 64 bits
        raise ProtobufError(f"{where}: {exc}") from None


_SCHEMA = "apiextensions.v1.JSONSchemaProps"


def _schema_or_array(value: Any, depth: int) -> bytes:
    # {1 schema, 2 jSONSchemas}: a JSON array is the list, an object the schema.
    if isinstance(value, list):
        return b"".join(
            _delimited(2, _message(item, _SCHEMA, depth + 1)) for item in value
        )
    return _delimited(1, _message(value, _SCHEMA, depth + 1))


def _schema_or_bool(value: Any, depth: int) -> bytes:
    # {1 allows, 2 schema}: true/false, or a schema (which allows).
    if isinstance(value, bool):
        return b"\x08\x01" if value else b"\x08\x00"
    return b"\x08\x01" + _delimited(2, _message(value, _SCHEMA, depth + 1))


def _schema_or_string_array(value: Any, depth: int) -> bytes:
    # {1 schema, 2 property}: a JSON array of names, or a schema.
    if isinstance(value, list):
        if not all(isinstance(item, str) for item in value):
            raise ProtobufError(f"{_SCHEMA}.dependencies: expected strings")
        return b"".join(_delimited(2, item.encode()) for item in value)
    return _delimited(1, _message(value, _SCHEMA, depth + 1))


#: Special types whose value holds messages again (CRD schemas).
_NESTING: dict[str, FieldEncoder] = {
    "schemaorarray": _schema_or_array,
    "schemaorbool": _schema_or_bool,
    "schemaorstringarray": _schema_or_string_array,
}

_SPECIAL: dict[str, Callable[[Any, str], bytes]] = {
    "duration": _duration,
    "intorstring": _int_or_string,
    "json": _embedded_json,
    "microtime": _micro_time,
    "quantity": _quantity,
    "time": _time,
}
