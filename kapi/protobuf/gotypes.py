"""Go struct types read back from a Go program's runtime type data (kubectl's).

kubectl links k8s.io/api and apimachinery, and a Go binary keeps, for ``reflect``,
every struct type its code can reach: package path, name, and each field's name,
type and tag (``json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"``),
even when stripped. Those tags are what go-to-protobuf wrote ``generated.proto``
from, so they give each message's field numbers, proto names, wire types and JSON
names without a source checkout. (Kubernetes no longer registers the gzipped
``generated.proto`` descriptors with gogo-protobuf, so the binary holds no
``FileDescriptorProto``: the struct tags are the one copy.)

How it reads them: the ELF ``.typelink`` section lists the offsets (from the
start of ``.rodata``, ``moduledata.types``) of the unnamed types (``*T``,
``[]T``, ``map[K]V``); walking element, key, field and pointer-to-this links
from those reaches the named structs. The layouts are Go's ``internal/abi``
``Type``, ``PtrType``, ``SliceType``, ``MapType`` (swiss maps), ``StructType``,
``UncommonType`` and ``Name`` on a 64-bit little-endian ELF (Go 1.24 or later,
which is what kubectl 1.3x is built with). ``read`` checks what it finds and
raises ``ValueError`` for a binary it cannot read.

Types are written with full import paths: ``*k8s.io/api/core/v1.PodSpec``,
``[]string``, ``map[string]k8s.io/apimachinery/pkg/api/resource.Quantity``.
"""

from __future__ import annotations

import functools
import os
import struct
from dataclasses import dataclass
from pathlib import Path

__all__ = ["GoField", "GoTypes", "ProtobufTag", "parse_tag", "protobuf_tag", "read"]

# internal/abi.Kind
_KINDS = {
    1: "bool", 2: "int", 3: "int8", 4: "int16", 5: "int32", 6: "int64",
    7: "uint", 8: "uint8", 9: "uint16", 10: "uint32", 11: "uint64", 12: "uintptr",
    13: "float32", 14: "float64", 15: "complex64", 16: "complex128", 17: "array",
    18: "chan", 19: "func", 20: "interface", 21: "map", 22: "ptr", 23: "slice",
    24: "string", 25: "struct", 26: "unsafe.Pointer",
}  # fmt: skip
_TFLAG_UNCOMMON = 1
_TFLAG_EXTRA_STAR = 2
_TFLAG_NAMED = 4
_NAME_HAS_TAG = 2
_NAME_EMBEDDED = 8
_TYPE = struct.Struct("<QQIBBBBQQii")  # abi.Type: 48 bytes
#: Bytes of each kind's own fields after abi.Type (ArrayType: Elem, Slice, Len;
#: MapType, swiss: Key, Elem, Group, Hasher, GroupSize, SlotSize, ElemOff, Flags).
_KIND_FIELDS = {17: 24, 18: 16, 19: 8, 20: 32, 21: 64, 22: 8, 23: 8, 25: 32}


@dataclass(frozen=True)
class GoField:
    """One field of a Go struct."""

    name: str
    type: str
    tag: str
    embedded: bool


@dataclass(frozen=True)
class GoTypes:
    """The named types of a binary: structs by ``import/path.Name`` with their
    fields, and every other named type with its underlying type (``string``,
    ``[]string``, ``map[...]...``)."""

    structs: dict[str, tuple[GoField, ...]]
    underlying: dict[str, str]


@dataclass(frozen=True)
class ProtobufTag:
    """A ``protobuf:"bytes,1,opt,name=metadata,casttype=..."`` struct tag."""

    wire: str  # varint, bytes, fixed64, fixed32, zigzag32, zigzag64
    number: int
    label: str  # opt, rep, req
    name: str


def parse_tag(tag: str, key: str) -> str | None:
    """The value of ``key`` in a Go struct tag (``reflect.StructTag.Get``), or None."""
    rest = tag
    while rest:
        rest = rest.lstrip(" ")
        colon = rest.find(':"')
        if colon <= 0:
            return None
        name, rest = rest[:colon], rest[colon + 2 :]
        end = 0
        while end < len(rest) and rest[end] != '"':
            end += 2 if rest[end] == "\\" else 1
        if name == key:
            return rest[:end]
        rest = rest[end + 1 :]
    return None


def protobuf_tag(tag: str) -> ProtobufTag | None:
    """The field's protobuf tag, or None (no tag, or ``protobuf:"-"``)."""
    value = parse_tag(tag, "protobuf")
    if not value or value == "-":
        return None
    parts = value.split(",")
    options = dict(part.partition("=")[::2] for part in parts[3:])
    return ProtobufTag(parts[0], int(parts[1]), parts[2], options.get("name", ""))


class _Reader:
    def __init__(self, data: bytes) -> None:
        if data[:6] != b"\x7fELF\x02\x01":
            raise ValueError("not a 64-bit little-endian ELF binary")
        self.data = data
        shoff = struct.unpack_from("<Q", data, 0x28)[0]
        entsize, count, names = struct.unpack_from("<HHH", data, 0x3A)
        headers = [
            struct.unpack_from("<IIQQQQ", data, shoff + i * entsize)
            for i in range(count)
        ]
        strtab = headers[names][4]
        self.sections: dict[str, tuple[int, int, int]] = {}
        for name, _type, _flags, address, offset, size in headers:
            label = data[strtab + name : data.index(b"\0", strtab + name)].decode()
            self.sections[label] = (address, offset, size)
        for needed in (".rodata", ".typelink"):
            if needed not in self.sections:
                raise ValueError(f"no {needed} section: not a Go binary")
        self.types = self.sections[".rodata"][0]
        self._spans = sorted(s for s in self.sections.values() if s[0] and s[2])

    def offset(self, address: int) -> int:
        for start, offset, size in self._spans:
            if start <= address < start + size:
                return offset + address - start
        raise ValueError(f"address {address:#x} is in no section")

    def u64(self, address: int) -> int:
        return struct.unpack_from("<Q", self.data, self.offset(address))[0]

    def varint(self, pos: int) -> tuple[int, int]:
        result = shift = 0
        while True:
            byte = self.data[pos]
            pos += 1
            result |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return result, pos

    def name(self, address: int) -> tuple[str, str, int]:
        """An ``abi.Name``: (name, tag, flag byte)."""
        pos = self.offset(address)
        flags = self.data[pos]
        size, pos = self.varint(pos + 1)
        name = self.data[pos : pos + size].decode("utf-8", "replace")
        tag = ""
        if flags & _NAME_HAS_TAG:
            tag_size, pos = self.varint(pos + size)
            tag = self.data[pos : pos + tag_size].decode("utf-8", "replace")
        return name, tag, flags


class _Walker:
    """Visits every type reachable from ``.typelink``; names each one."""

    def __init__(self, reader: _Reader) -> None:
        self.r = reader
        self.names: dict[int, str] = {}
        self.result = GoTypes({}, {})

    def header(self, address: int) -> tuple[int, int, str, int]:
        fields = _TYPE.unpack_from(self.r.data, self.r.offset(address))
        tflag, kind = fields[3], fields[6] & 0x1F
        str_off, ptr_to_this = fields[9], fields[10]
        text = self.r.name(self.r.types + str_off)[0]
        if tflag & _TFLAG_EXTRA_STAR:
            text = text[1:]
        return tflag, kind, text, ptr_to_this

    def package(self, address: int, kind: int) -> str:
        # UncommonType follows abi.Type (48 bytes) and the kind's own fields.
        at = self.r.offset(address + 48 + _KIND_FIELDS.get(kind, 0))
        pkg_off = struct.unpack_from("<i", self.r.data, at)[0]
        return self.r.name(self.r.types + pkg_off)[0] if pkg_off else ""

    def name(self, address: int) -> str:
        """The type's name with full import paths; records named types on the way."""
        if address in self.names:
            return self.names[address]
        self.names[address] = "?"  # a recursive type names itself through a pointer
        tflag, kind, text, _ = self.header(address)
        kind_name = _KINDS.get(kind, "?")
        if kind_name == "ptr":
            spelled = "*" + self.name(self.r.u64(address + 48))
        elif kind_name == "slice":
            spelled = "[]" + self.name(self.r.u64(address + 48))
        elif kind_name == "array":
            length = self.r.u64(address + 64)
            spelled = f"[{length}]" + self.name(self.r.u64(address + 48))
        elif kind_name == "map":
            key, elem = self.r.u64(address + 48), self.r.u64(address + 56)
            spelled = f"map[{self.name(key)}]{self.name(elem)}"
        elif kind_name == "struct":
            spelled = "struct{...}"
        else:
            spelled = kind_name
        if tflag & _TFLAG_NAMED:
            package = self.package(address, kind) if tflag & _TFLAG_UNCOMMON else ""
            full = f"{package}.{text.rpartition('.')[2]}" if package else text
            self.names[address] = full
            if kind_name == "struct":
                self.result.structs[full] = self.fields(address)
            elif package:
                self.result.underlying[full] = spelled
            return full
        self.names[address] = spelled
        if kind_name == "struct":
            self.fields(address)
        return spelled

    def fields(self, address: int) -> tuple[GoField, ...]:
        start, count = self.r.u64(address + 56), self.r.u64(address + 64)
        fields = []
        for index in range(count):
            name_at, type_at, _offset = struct.unpack_from(
                "<QQQ", self.r.data, self.r.offset(start + 24 * index)
            )
            name, tag, flags = self.r.name(name_at)
            embedded = bool(flags & _NAME_EMBEDDED)
            fields.append(GoField(name, self.name(type_at), tag, embedded))
        return tuple(fields)

    def walk(self) -> GoTypes:
        _address, offset, size = self.r.sections[".typelink"]
        for link in struct.unpack_from(f"<{size // 4}i", self.r.data, offset):
            address = self.r.types + link
            self.name(address)
            ptr_to_this = self.header(address)[3]
            if ptr_to_this:
                self.name(self.r.types + ptr_to_this)
        return self.result


@functools.cache
def _read(path: str, _size: int, _mtime: float) -> GoTypes:
    types = _Walker(_Reader(Path(path).read_bytes())).walk()
    if not types.structs:
        raise ValueError(f"{path}: no Go struct types found")
    return types


def read(path: str | os.PathLike[str]) -> GoTypes:
    """The named Go types of the binary at ``path`` (cached per file version)."""
    stat = os.stat(path)
    return _read(os.fspath(path), stat.st_size, stat.st_mtime)
