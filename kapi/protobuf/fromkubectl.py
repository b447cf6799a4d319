"""The message tables from a kubectl binary: ``generate.py --kubectl``.

``kapi.protobuf.gotypes`` reads the Go struct types kubectl carries; this module
turns them into the tables' notation by the same rules ``generate.describe``
applies to a source checkout (``go_message``), and rebuilds the committed
descriptions from them (``refresh``): every message kubectl has, with only the
fields the served release's published definitions know (``served_message``), and
the messages new fields need. ``tests/protobuf/test_upstream.py`` uses the same
functions to check the committed tables against kubectl.
"""

from __future__ import annotations

from pathlib import Path

from kapi.protobuf import gotypes
from kapi.protobuf.generate import (
    MODULES,
    SPECIAL,
    Description,
    committed,
    referenced,
    render,
    short_package,
)
from kapi.protobuf.schema import SCALARS, Message

__all__ = [
    "from_kubectl",
    "go_message",
    "go_message_name",
    "go_names",
    "refresh",
    "served_message",
    "served_properties",
]

_GO_SCALARS = {
    "[]uint8": "bytes", "bool": "bool", "float32": "float", "float64": "double",
    "int32": "int32", "int64": "int64", "string": "string", "uint32": "uint32",
    "uint64": "uint64",
}  # fmt: skip
#: (protobuf tag wire type, Go scalar) → proto type, where the wire type decides.
_WIRE_SCALARS = {
    ("fixed32", "int32"): "sfixed32", ("fixed32", "uint32"): "fixed32",
    ("fixed64", "int64"): "sfixed64", ("fixed64", "uint64"): "fixed64",
    ("zigzag32", "int32"): "sint32", ("zigzag64", "int64"): "sint64",
}  # fmt: skip


def go_message_name(go_name: str) -> str:
    """``k8s.io/api/core/v1.Pod`` → ``core.v1.Pod`` (the tables' message names)."""
    package, _, name = go_name.rpartition(".")
    return f"{short_package(package.replace('/', '.'))}.{name}"


def _split_map(go_type: str) -> tuple[str, str]:
    depth = 0
    for index, char in enumerate(go_type):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "]" and depth == 0:
            return go_type[4:index], go_type[index + 1 :]
    raise ValueError(go_type)


def _proto_type(types: gotypes.GoTypes, go_type: str, wire: str = "") -> str:
    """A Go field type as the tables spell its proto type. A named slice is a
    message (go-to-protobuf wraps ``type Verbs []string`` as ``items = 1``)."""
    go_type = go_type.removeprefix("*")
    if go_type in _GO_SCALARS:
        scalar = _GO_SCALARS[go_type]
        return _WIRE_SCALARS.get((wire, scalar), scalar)
    if go_type.startswith("[]"):
        return "[]" + _proto_type(types, go_type[2:], wire)
    if go_type.startswith("map["):
        key, value = _split_map(go_type)
        return f"map[{_proto_type(types, key)}]{_proto_type(types, value)}"
    if go_type in types.structs:
        return go_message_name(go_type)
    underlying = types.underlying.get(go_type)
    if underlying is None:
        raise ValueError(f"{go_type}: not a type the binary names")
    if underlying.startswith("[]") and underlying != "[]uint8":
        return go_message_name(go_type)
    return _proto_type(types, underlying, wire)


def go_message(types: gotypes.GoTypes, go_name: str) -> Message:
    """The table of the Go type ``go_name`` (``k8s.io/api/core/v1.PodSpec``) from its
    struct tags, by the same rules as ``describe``: every field with a protobuf
    tag, the JSON name from the json tag (``""`` inline), ``*`` on a scalar that is
    a pointer or has no ``omitempty``. A named slice is ``"[]T"``."""
    if go_name not in types.structs:
        return "[]" + _proto_type(types, types.underlying[go_name][2:])
    table: dict[int, tuple[str, str]] = {}
    for field in types.structs[go_name]:
        tag = gotypes.protobuf_tag(field.tag)
        if tag is None:
            continue
        json_tag = gotypes.parse_tag(field.tag, "json") or ""
        json_name, _, options = json_tag.partition(",")
        type_ = _proto_type(types, field.type, tag.wire)
        kept = field.type.startswith("*") or "omitempty" not in options.split(",")
        if type_ in SCALARS and kept:
            type_ = "*" + type_
        table[tag.number] = (json_name, type_)
    return dict(sorted(table.items()))


def go_names(types: gotypes.GoTypes) -> dict[str, str]:
    """Message name → Go type name, for every named struct and named slice of the
    API packages (k8s.io/api, apimachinery, apiextensions, kube-aggregator)."""
    names = {}
    for go_name in (*types.structs, *types.underlying):
        if go_name.startswith("k8s.io/") and (
            go_name in types.structs or types.underlying[go_name].startswith("[]")
        ):
            names.setdefault(go_message_name(go_name), go_name)
    return names


def served_properties(go_name: str) -> set[str] | None:
    """The JSON properties of the served release's published definition of a Go
    type (``kapi.schema.builtin``), or None when it has none with properties."""
    from kapi.schema.builtin import builtin_definitions

    dotted = go_name.replace("/", ".").replace("k8s.io.", "k8s.", 1)
    definition = builtin_definitions().get("io." + dotted)
    if not definition or not definition.get("properties"):
        return None
    return set(definition["properties"])


def served_message(types: gotypes.GoTypes, go_name: str) -> Message:
    """``go_message`` without the fields the served release does not have yet: a
    kubectl of a later minor than the served one knows fields (by their JSON name)
    that the served release's published definition lacks; those stay out."""
    table = go_message(types, go_name)
    served = served_properties(go_name)
    if isinstance(table, str) or served is None:
        return table
    return {n: f for n, f in table.items() if f[0] == "" or f[0] in served}


def refresh(description: Description, types: gotypes.GoTypes) -> Description:
    """``description`` with each message the binary has rebuilt from its struct
    tags (``served_message``), and the messages the new fields reach added. Special
    types and messages the binary lacks are kept as they are."""
    names = go_names(types)
    messages = dict(description.messages)
    own = {name.rpartition(".")[0] for name in messages}  # this module's packages
    queue = list(messages)
    while queue:
        name = queue.pop()
        current = messages.get(name)
        if isinstance(current, str) and not current.startswith("[]") or name in SPECIAL:
            continue
        if name not in names:
            if current is None:
                raise ValueError(f"{name}: referenced, but not in the binary")
            continue
        messages[name] = served_message(types, names[name])
        queue.extend(
            new
            for new in referenced(messages[name])
            if new not in messages and new.rpartition(".")[0] in own
        )
    return Description(description.module, messages, description.kinds)


def from_kubectl(binary: str | Path) -> dict[str, str]:
    """File name → text of every generated module, the committed tables refreshed
    from a kubectl binary's struct tags (``refresh``)."""
    types = gotypes.read(binary)
    return {
        f"messages_{module}.py": render(refresh(committed(module), types))
        for module in MODULES
    }
