"""Message descriptors: the notation of the ``messages_*`` tables.

A message is named by its short proto name: the proto package without its
``k8s.io.api.`` prefix (``core.v1.ConfigMap``), or for apimachinery
``meta.v1.*``, ``resource.Quantity``, ``intstr.IntOrString``, ``runtime.*``.

Each message maps to either

* a ``dict`` of field number → ``(json name, type)``, or
* a ``str`` naming a type whose JSON form is not an object (see ``SPECIAL_TYPES``),
  or ``"[]T"`` for a Go named slice (``type ExtraValue []string``) that protobuf
  wraps in a message with one repeated field ``items = 1``.

A field type is

* a scalar: ``string bool int32 int64 uint32 uint64 sint32 sint64 fixed32
  fixed64 sfixed32 sfixed64 double float bytes``; ``bytes`` becomes base64
  as Go's ``encoding/json`` does for ``[]byte``;
* a message name;
* ``[]T`` for a repeated field, ``map[K]V`` for a map field (entries with key 1
  and value 2).

A scalar prefixed with ``*`` keeps its zero value in JSON: the Go field is a
pointer (``*bool``) or has no ``omitempty``. Other scalars equal to their zero value
are left out, as Go's ``omitempty`` would, because gogo-protobuf writes non-pointer
fields even when they are zero. A JSON name of ``""`` marks an embedded Go struct
whose fields are inlined into the parent object (``Volume.volumeSource``).
"""

from __future__ import annotations

from typing import TypeAlias

__all__ = ["SCALARS", "SPECIAL_TYPES", "Field", "Message"]

Field: TypeAlias = tuple[str, str]
Message: TypeAlias = dict[int, Field] | str

SCALARS = frozenset(
    {
        "bool",
        "bytes",
        "double",
        "fixed32",
        "fixed64",
        "float",
        "int32",
        "int64",
        "sfixed32",
        "sfixed64",
        "sint32",
        "sint64",
        "string",
        "uint32",
        "uint64",
    }
)

# Types with a custom Go JSON marshaller; the decoder has one function for each.
SPECIAL_TYPES = frozenset(
    {
        "duration",  # meta.v1.Duration {1 int64 ns} → "1h0m0s"
        "intorstring",  # intstr.IntOrString {1 type, 2 intVal, 3 strVal} → 8 or "80%"
        "json",  # FieldsV1 / RawExtension {1 raw bytes} → embedded JSON value
        "microtime",  # meta.v1.MicroTime {1 seconds, 2 nanos} → RFC 3339, 6 digits
        "quantity",  # resource.Quantity {1 string} → "100m"
        # apiextensions.v1.JSONSchemaPropsOr*: a schema, or another JSON form
        "schemaorarray",  # {1 schema, 2 jSONSchemas} → schema or [schema...]
        "schemaorbool",  # {1 allows, 2 schema} → schema or true/false
        "schemaorstringarray",  # {1 schema, 2 property} → schema or ["a", ...]
        "time",  # meta.v1.Time {1 seconds} → RFC 3339 seconds, zero → null
    }
)
