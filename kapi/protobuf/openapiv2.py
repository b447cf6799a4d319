"""The OpenAPI v2 document as gnostic's ``openapi.v2.Document`` protobuf.

client-go's ``OpenAPISchema()`` asks ``/openapi/v2`` for
``application/com.github.proto-openapi.spec.v2@v1.0+protobuf`` only, and parses
the answer with ``proto.Unmarshal`` into gnostic's ``openapi_v2.Document``
(kubectl ``explain --output=plaintext-openapiv2``, kubectl's fallback for kinds
missing from OpenAPI v3, Argo CD's and Helm's schema readers). This encodes the
Swagger 2.0 JSON document the way gnostic's compiler reads it: JSON maps become
repeated ``Named*`` pairs, ``x-`` keys ``vendor_extension``, ``type`` a
``TypeItem``, ``items`` an ``ItemsItem``, and free-form values (``default``,
``enum``, ``example``, extensions) an ``Any`` whose ``yaml`` holds the value
(JSON, which is YAML, as kube-openapi's ``VendorExtensionToMap`` reads it back).

Field numbers are those of gnostic's ``openapiv2/OpenAPIv2.proto``. Fields are
written in field-number order with proto3 zero values left out, as Go's
``proto.Marshal`` does. Keys gnostic has no field for are dropped.
"""

from __future__ import annotations

import json
import struct
from typing import Any

__all__ = ["encode_document"]

_VARINT, _FIXED64, _BYTES = 0, 1, 2


# -- wire primitives -----------------------------------------------------------------
def _varint(n: int) -> bytes:
    if n < 0:
        n += 1 << 64
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _tag(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _bytes(number: int, payload: bytes) -> bytes:
    return _tag(number, _BYTES) + _varint(len(payload)) + payload


def _string(number: int, value: Any) -> bytes:
    if not isinstance(value, str) or not value:
        return b""
    return _bytes(number, value.encode())


def _strings(number: int, values: Any) -> bytes:
    if isinstance(values, str):
        values = [values]
    return b"".join(
        _bytes(number, v.encode()) for v in values or () if isinstance(v, str)
    )


def _bool(number: int, value: Any) -> bytes:
    return _tag(number, _VARINT) + b"\x01" if value is True else b""


def _double(number: int, value: Any) -> bytes:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value:
        return b""
    return _tag(number, _FIXED64) + struct.pack("<d", float(value))


def _int64(number: int, value: Any) -> bytes:
    if isinstance(value, bool) or not isinstance(value, int) or not value:
        return b""
    return _tag(number, _VARINT) + _varint(value)


# -- free-form values ------------------------------------------------------------------
def _any(value: Any) -> bytes:
    """``Any{yaml}``: the value as YAML text (JSON is YAML)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return _bytes(2, text.encode())


def _extensions(number: int, node: dict) -> bytes:
    """Every ``x-`` key as a ``NamedAny{name, value}``, in document order."""
    out = b""
    for key, value in node.items():
        if isinstance(key, str) and key.startswith("x-"):
            out += _bytes(number, _string(1, key) + _bytes(2, _any(value)))
    return out


def _named(number: int, mapping: Any, encode) -> bytes:
    """A JSON map as repeated ``Named<T>{name = 1, value = 2}``."""
    if not isinstance(mapping, dict):
        return b""
    return b"".join(
        _bytes(number, _string(1, name) + _bytes(2, encode(value)))
        for name, value in mapping.items()
        if not (isinstance(name, str) and name.startswith("x-"))
    )


# -- schemas -----------------------------------------------------------------------------
def _schema(node: Any) -> bytes:
    if not isinstance(node, dict):
        return b""
    out = _string(1, node.get("$ref"))
    out += _string(2, node.get("format"))
    out += _string(3, node.get("title"))
    out += _string(4, node.get("description"))
    if "default" in node:
        out += _bytes(5, _any(node["default"]))
    out += _double(6, node.get("multipleOf"))
    out += _double(7, node.get("maximum"))
    out += _bool(8, node.get("exclusiveMaximum"))
    out += _double(9, node.get("minimum"))
    out += _bool(10, node.get("exclusiveMinimum"))
    out += _int64(11, node.get("maxLength"))
    out += _int64(12, node.get("minLength"))
    out += _string(13, node.get("pattern"))
    out += _int64(14, node.get("maxItems"))
    out += _int64(15, node.get("minItems"))
    out += _bool(16, node.get("uniqueItems"))
    out += _int64(17, node.get("maxProperties"))
    out += _int64(18, node.get("minProperties"))
    out += _strings(19, node.get("required"))
    for value in node.get("enum") or ():
        out += _bytes(20, _any(value))
    extra = node.get("additionalProperties")
    if isinstance(extra, bool):
        out += _bytes(21, _tag(2, _VARINT) + (b"\x01" if extra else b"\x00"))
    elif isinstance(extra, dict):
        out += _bytes(21, _bytes(1, _schema(extra)))
    if "type" in node:
        out += _bytes(22, _strings(1, node["type"]))
    items = node.get("items")
    if isinstance(items, dict):
        items = [items]
    if isinstance(items, list):
        out += _bytes(23, b"".join(_bytes(1, _schema(i)) for i in items))
    for part in node.get("allOf") or ():
        out += _bytes(24, _schema(part))
    if isinstance(node.get("properties"), dict):
        out += _bytes(25, _named(1, node["properties"], _schema))
    out += _string(26, node.get("discriminator"))
    out += _bool(27, node.get("readOnly"))
    if isinstance(node.get("externalDocs"), dict):
        out += _bytes(29, _external_docs(node["externalDocs"]))
    if "example" in node:
        out += _bytes(30, _any(node["example"]))
    return out + _extensions(31, node)


def _external_docs(node: dict) -> bytes:
    return (
        _string(1, node.get("description"))
        + _string(2, node.get("url"))
        + _extensions(3, node)
    )


# -- paths -------------------------------------------------------------------------------
def _parameter(node: dict) -> bytes:
    """``ParametersItem``: a ``$ref`` or a body / non-body ``Parameter``."""
    if "$ref" in node:
        return _bytes(2, _string(1, node["$ref"]) + _string(2, node.get("description")))
    where = node.get("in")
    if where == "body":
        body = (
            _string(1, node.get("description"))
            + _string(2, node.get("name"))
            + _string(3, where)
            + _bool(4, node.get("required"))
        )
        if isinstance(node.get("schema"), dict):
            body += _bytes(5, _schema(node["schema"]))
        return _bytes(1, _bytes(1, body + _extensions(6, node)))
    # query and formData carry allowEmptyValue (5) and shift the rest by one.
    shifted = where in ("query", "formData")
    base = 6 if shifted else 5
    sub = (
        _bool(1, node.get("required"))
        + _string(2, where)
        + _string(3, node.get("description"))
        + _string(4, node.get("name"))
        + (_bool(5, node.get("allowEmptyValue")) if shifted else b"")
        + _string(base, node.get("type"))
        + _string(base + 1, node.get("format"))
        + _string(base + 3, node.get("collectionFormat"))
        + _bool(base + 14, node.get("uniqueItems"))
        + _extensions(base + 17, node)
    )
    choice = {"header": 1, "formData": 2, "query": 3, "path": 4}.get(where, 3)
    return _bytes(1, _bytes(2, _bytes(choice, sub)))


def _response(node: Any) -> bytes:
    if not isinstance(node, dict):
        return b""
    if "$ref" in node:
        return _bytes(2, _string(1, node["$ref"]))
    body = _string(1, node.get("description"))
    if isinstance(node.get("schema"), dict):
        body += _bytes(2, _bytes(1, _schema(node["schema"])))
    return _bytes(1, body + _extensions(5, node))


def _operation(node: dict) -> bytes:
    out = _strings(1, node.get("tags"))
    out += _string(2, node.get("summary"))
    out += _string(3, node.get("description"))
    out += _string(5, node.get("operationId"))
    out += _strings(6, node.get("produces"))
    out += _strings(7, node.get("consumes"))
    for param in node.get("parameters") or ():
        if isinstance(param, dict):
            out += _bytes(8, _parameter(param))
    if isinstance(node.get("responses"), dict):
        out += _bytes(
            9,
            _named(1, node["responses"], _response) + _extensions(2, node["responses"]),
        )
    out += _strings(10, node.get("schemes"))
    out += _bool(11, node.get("deprecated"))
    return out + _extensions(13, node)


_METHODS = (
    ("get", 2),
    ("put", 3),
    ("post", 4),
    ("delete", 5),
    ("options", 6),
    ("head", 7),
    ("patch", 8),
)


def _path_item(node: Any) -> bytes:
    if not isinstance(node, dict):
        return b""
    out = _string(1, node.get("$ref"))
    for method, number in _METHODS:
        if isinstance(node.get(method), dict):
            out += _bytes(number, _operation(node[method]))
    for param in node.get("parameters") or ():
        if isinstance(param, dict):
            out += _bytes(9, _parameter(param))
    return out + _extensions(10, node)


# -- the document ---------------------------------------------------------------------------
def _info(node: dict) -> bytes:
    return (
        _string(1, node.get("title"))
        + _string(2, node.get("version"))
        + _string(3, node.get("description"))
        + _string(4, node.get("termsOfService"))
        + _extensions(7, node)
    )


def encode_document(doc: dict) -> bytes:
    """The ``openapi.v2.Document`` encoding of a Swagger 2.0 JSON document."""
    out = _string(1, doc.get("swagger"))
    if isinstance(doc.get("info"), dict):
        out += _bytes(2, _info(doc["info"]))
    out += _string(3, doc.get("host"))
    out += _string(4, doc.get("basePath"))
    out += _strings(5, doc.get("schemes"))
    out += _strings(6, doc.get("consumes"))
    out += _strings(7, doc.get("produces"))
    if isinstance(doc.get("paths"), dict):
        paths = doc["paths"]
        out += _bytes(8, _extensions(1, paths) + _named(2, paths, _path_item))
    if isinstance(doc.get("definitions"), dict):
        out += _bytes(9, _named(1, doc["definitions"], _schema))
    return out + _extensions(16, doc)
