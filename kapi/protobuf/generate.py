"""The generator of the ``messages_*`` tables, from Kubernetes' published sources.

It works in two steps: *describe* (sources → a ``Description``: message tables and
kinds) and *render* (``Description`` → module text). The committed modules are
exactly ``render``'s output, which ``tests/protobuf/test_generate.py`` checks by
reading each one back (``committed``) and rendering it again.

Descriptions come from one of two places:

**A source checkout** (``describe``): a directory laid out like Go import paths
(``k8s.io/api/core/v1/``, ``k8s.io/apimachinery/pkg/apis/meta/v1/``: k8s.io/api,
apimachinery, apiextensions-apiserver and kube-aggregator at the served release;
kapi does not keep a copy) holding each package's ``generated.proto`` and the Go
files with ``protobuf:"..."`` struct tags:

* field numbers and types come from ``generated.proto``;
* JSON names, ``*`` (a pointer, or no ``omitempty``: the zero value is kept) and
  embedded structs (JSON name ``""``) from the Go struct tags;
* kinds are the Go structs that embed ``TypeMeta``; ``type X []T`` is a named slice.

**A kubectl binary** (``kapi.protobuf.fromkubectl``): the struct tags kubectl
carries for ``reflect`` (``kapi.protobuf.gotypes``) give numbers, wire types, proto and JSON
names of every k8s.io/api and apimachinery type kubectl reaches; each committed
message kubectl has is rebuilt from them, keeping only fields the served release's
published definitions have (a later kubectl may know newer fields), and messages
the new fields need are added. apiextensions-apiserver and kube-aggregator are not
linked into kubectl, so those tables keep what the sources gave.

Regenerate::

    python -m kapi.protobuf.generate PATH/TO/SOURCES kapi/protobuf
    python -m kapi.protobuf.generate --kubectl [.venv/bin/kubectl] kapi/protobuf

The output is formatted as ruff formats it; ruff leaves the tables alone
(``extend-exclude`` in pyproject.toml), so the files are exactly the output.
"""

from __future__ import annotations

import functools
import re
import shutil
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from kapi.protobuf.schema import SCALARS, Message

__all__ = [
    "GROUPS",
    "MARKER",
    "META_PACKAGES",
    "MODULES",
    "SPECIAL",
    "Description",
    "committed",
    "describe",
    "import_path",
    "main",
    "outputs",
    "referenced",
    "render",
    "short_package",
]

#: module suffix → (API versions, proto packages under k8s.io/api, extra packages)
GROUPS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "admissionregistration": (
        ("admissionregistration.k8s.io/v1",),
        ("admissionregistration/v1",),
    ),
    "apiextensions": (
        ("apiextensions.k8s.io/v1",),
        ("k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1",),
    ),
    "apiregistration": (
        ("apiregistration.k8s.io/v1",),
        ("k8s.io/kube-aggregator/pkg/apis/apiregistration/v1",),
    ),
    "apps": (("apps/v1",), ("apps/v1",)),
    "authentication": (("authentication.k8s.io/v1",), ("authentication/v1",)),
    "authorization": (("authorization.k8s.io/v1",), ("authorization/v1",)),
    "autoscaling": (
        ("autoscaling/v1", "autoscaling/v2"),
        ("autoscaling/v1", "autoscaling/v2"),
    ),
    "batch": (("batch/v1",), ("batch/v1",)),
    "certificates": (("certificates.k8s.io/v1",), ("certificates/v1",)),
    "coordination": (("coordination.k8s.io/v1",), ("coordination/v1",)),
    "core": (("v1",), ("core/v1",)),
    "discovery": (("discovery.k8s.io/v1",), ("discovery/v1",)),
    "events": (("events.k8s.io/v1",), ("events/v1",)),
    "flowcontrol": (("flowcontrol.apiserver.k8s.io/v1",), ("flowcontrol/v1",)),
    "networking": (("networking.k8s.io/v1",), ("networking/v1",)),
    "node": (("node.k8s.io/v1",), ("node/v1",)),
    "policy": (("policy/v1",), ("policy/v1",)),
    "rbac": (("rbac.authorization.k8s.io/v1",), ("rbac/v1",)),
    "resource": (("resource.k8s.io/v1",), ("resource/v1",)),
    "scheduling": (("scheduling.k8s.io/v1",), ("scheduling/v1", "scheduling/v1alpha3")),
    "storage": (("storage.k8s.io/v1",), ("storage/v1",)),
    "storagemigration": (("storagemigration.k8s.io/v1",), ("storagemigration/v1",)),
}

#: Types with their own Go JSON marshaller (``kapi.protobuf.schema.SPECIAL_TYPES``).
SPECIAL = {
    "apiextensions.v1.JSON": "json",
    "apiextensions.v1.JSONSchemaPropsOrArray": "schemaorarray",
    "apiextensions.v1.JSONSchemaPropsOrBool": "schemaorbool",
    "apiextensions.v1.JSONSchemaPropsOrStringArray": "schemaorstringarray",
    "intstr.IntOrString": "intorstring",
    "meta.v1.Duration": "duration",
    "meta.v1.FieldsV1": "json",
    "meta.v1.MicroTime": "microtime",
    "meta.v1.Time": "time",
    "resource.Quantity": "quantity",
    "resource.QuantityValue": "quantity",
    "runtime.RawExtension": "json",
}
_PACKAGES = {
    "k8s.io.apimachinery.pkg.api.resource": "resource",
    "k8s.io.apimachinery.pkg.apis.meta.v1": "meta.v1",
    "k8s.io.apimachinery.pkg.apis.meta.v1beta1": "meta.v1beta1",
    "k8s.io.apimachinery.pkg.runtime": "runtime",
    "k8s.io.apimachinery.pkg.runtime.schema": "runtime.schema",
    "k8s.io.apimachinery.pkg.util.intstr": "intstr",
}
_MESSAGE = re.compile(r"^message (\w+) \{\n(.*?)^\}", re.M | re.S)
_FIELD = re.compile(
    r"^\s*(optional|repeated)?\s*(map<\s*(\S+)\s*,\s*(\S+)\s*>|\S+)\s+(\w+)\s*=\s*(\d+);",
    re.M,
)
_STRUCT = re.compile(r"^type (\w+) struct \{\n(.*?)^\}", re.M | re.S)
_SLICE = re.compile(r"^type (\w+) \[\]([\w.]+)$", re.M)
_LIST_ALIAS = re.compile(r"^type (\w+) metav1\.List$", re.M)  # core/v1 List
_GO_FIELD = re.compile(r"^\t([^`\n]+?)\s*`([^`]*)`", re.M)


@dataclass(frozen=True)
class GoField:
    json_name: str
    pointer_or_kept: bool  # a Go pointer, or no omitempty: JSON keeps the zero value
    inline: bool


def short_package(package: str) -> str:
    """A proto package as the tables' message names spell it:
    ``k8s.io.api.core.v1`` → ``core.v1``, ``k8s.io.apimachinery.pkg.apis.meta.v1``
    → ``meta.v1``."""
    if package in _PACKAGES:
        return _PACKAGES[package]
    if ".pkg.apis." in package:  # k8s.io.kube_aggregator.pkg.apis.apiregistration.v1
        return package.partition(".pkg.apis.")[2]
    return package.removeprefix("k8s.io.api.")


def import_path(package: str) -> str:
    """``core/v1`` is k8s.io/api's; other repositories are named in full."""
    return package if package.startswith("k8s.io/") else f"k8s.io/api/{package}"


def _type_name(proto_type: str, package: str) -> str:
    if proto_type in SCALARS:
        return proto_type
    if proto_type.startswith("."):
        qualified = proto_type[1:]
        package, _, name = qualified.rpartition(".")
        return f"{short_package(package)}.{name}"
    return f"{short_package(package)}.{proto_type}"


def _go_structs(
    directory: Path,
) -> tuple[dict[str, dict[int, GoField]], set[str], dict[str, str]]:
    """Struct fields by protobuf number, kinds (structs embedding TypeMeta), named slices."""
    structs: dict[str, dict[int, GoField]] = {}
    kinds: set[str] = set()
    slices: dict[str, str] = {}
    for path in sorted(directory.glob("*.go")):
        source = path.read_text()
        for name, element in _SLICE.findall(source):
            slices[name] = element
        kinds.update(_LIST_ALIAS.findall(source))
        for name, body in _STRUCT.findall(source):
            fields: dict[int, GoField] = {}
            for declaration, tag in _GO_FIELD.findall(body):
                parts = declaration.split()
                go_type = parts[-1]
                if go_type.endswith("TypeMeta") and len(parts) == 1:
                    kinds.add(name)
                protobuf = re.search(r'protobuf:"([^"]*)"', tag)
                json_tag = re.search(r'json:"([^"]*)"', tag)
                if protobuf is None or "," not in protobuf.group(1):
                    continue  # no protobuf field (protobuf:"-")
                number = int(protobuf.group(1).split(",")[1])
                json_name, _, options = (
                    json_tag.group(1) if json_tag else ""
                ).partition(",")
                inline = json_name == ""  # embedded with json:",inline" or json:""
                kept = go_type.startswith("*") or "omitempty" not in options.split(",")
                fields[number] = GoField("" if inline else json_name, kept, inline)
            structs[name] = fields
    return structs, kinds, slices


def _messages(root: Path, path: str) -> tuple[dict[str, object], list[str]]:
    """The table entries of one proto package (at import path ``path``), and its kinds."""
    directory = root / path
    proto = (directory / "generated.proto").read_text()
    package = re.search(r"^package ([\w.]+);", proto, re.M).group(1)
    short = short_package(package)
    structs, kinds, slices = _go_structs(directory)
    out: dict[str, object] = {}
    for name, body in _MESSAGE.findall(proto):
        full = f"{short}.{name}"
        if full in SPECIAL:
            out[full] = SPECIAL[full]
            continue
        fields = _FIELD.findall(body)
        if name in slices:
            (_label, proto_type, _k, _v, _field, _number) = fields[0]
            out[full] = "[]" + _type_name(proto_type, package)
            continue
        go = structs.get(name, {})
        table: dict[int, tuple[str, str]] = {}
        for label, proto_type, key_type, value_type, field_name, number_text in fields:
            number = int(number_text)
            go_field = go.get(number, GoField(field_name, False, False))
            if key_type:
                type_ = f"map[{_type_name(key_type, package)}]{_type_name(value_type, package)}"
            else:
                type_ = _type_name(proto_type, package)
                if label == "repeated":
                    type_ = "[]" + type_
                elif type_ in SCALARS and go_field.pointer_or_kept:
                    type_ = "*" + type_
            table[number] = (go_field.json_name, type_)
        out[full] = dict(sorted(table.items()))
    return dict(sorted(out.items())), sorted(
        name for name in kinds if f"{short}.{name}" in out
    )


def referenced(table: Message) -> list[str]:
    """The message and scalar names a table's fields (or named slice) use."""
    if isinstance(table, str):
        return [table[2:]] if table.startswith("[]") else []
    names = []
    for _json_name, type_ in table.values():
        type_ = type_.lstrip("*").removeprefix("[]")
        if type_.startswith("map["):
            type_ = type_.partition("]")[2]
        names.append(type_)
    return names


@functools.cache
def _reachable(root: Path) -> set[str]:
    """Every message the kinds of all groups' own packages reach."""
    tables: dict[str, object] = {}
    start: list[str] = []
    for api_versions, packages in GROUPS.values():
        for package in packages:
            found, _kinds = _messages(root, import_path(package))
            tables.update(found)
            if package in packages[: len(api_versions)]:
                start.extend(found)
    seen: set[str] = set()
    while start:
        name = start.pop()
        if name in seen or name not in tables:
            continue
        seen.add(name)
        start.extend(referenced(tables[name]))
    return seen


@dataclass(frozen=True)
class Description:
    """What one ``messages_<module>.py`` says, whatever it was read from (published
    sources, a kubectl binary, or the committed module itself).

    ``messages`` maps message names to tables (``kapi.protobuf.schema``); ``kinds``
    maps API versions to (message package, kind names), empty for ``meta``.
    ``render`` turns a description into the module's text.
    """

    module: str
    messages: dict[str, Message]
    kinds: dict[str, tuple[str, tuple[str, ...]]]


#: apimachinery packages of the shared types, in the order the meta module lists them.
META_PACKAGES = (
    "k8s.io/apimachinery/pkg/apis/meta/v1",
    "k8s.io/apimachinery/pkg/api/resource",
    "k8s.io/apimachinery/pkg/util/intstr",
    "k8s.io/apimachinery/pkg/runtime",
)
#: runtime.TypeMeta and runtime.Unknown are the envelope, read by decode.py itself.
_ENVELOPE = {"runtime.TypeMeta", "runtime.Unknown"}
#: Every generated module, by the suffix of its file name.
MODULES = (*GROUPS, "meta")


def describe(root: Path, module: str) -> Description:
    """The description of ``messages_<module>.py`` extracted from the sources at ``root``."""
    if module == "meta":
        messages: dict[str, Message] = {}
        for package in META_PACKAGES:
            found = _messages(root, package)[0]
            messages.update(
                {name: table for name, table in found.items() if name not in _ENVELOPE}
            )
        return Description("meta", messages, {})
    api_versions, packages = GROUPS[module]
    messages = {}
    kinds: dict[str, tuple[str, tuple[str, ...]]] = {}
    for api_version, package in zip(api_versions, packages, strict=False):
        found, package_kinds = _messages(root, import_path(package))
        messages.update(found)
        kinds[api_version] = (".".join(package.split("/")[-2:]), tuple(package_kinds))
    for package in packages[len(api_versions) :]:
        # A package without kinds here (scheduling/v1alpha3): only the messages
        # other groups' kinds embed (batch/v1 Job's scheduling constraints).
        used = _reachable(root)
        found = _messages(root, import_path(package))[0]
        messages.update({name: table for name, table in found.items() if name in used})
    return Description(module, messages, kinds)


def committed(module: str, text: str | None = None) -> Description:
    """The description a ``messages_<module>.py`` holds (its ``MESSAGES`` and
    ``KINDS``), read from ``text`` or else the committed file. Rendering it gives
    the text back byte for byte, unless someone edited the text by hand."""
    if text is None:
        text = (Path(__file__).parent / f"messages_{module}.py").read_text()
    namespace: dict[str, object] = {"__name__": f"kapi.protobuf.messages_{module}"}
    exec(compile(text, f"messages_{module}.py", "exec"), namespace)
    return Description(
        module, dict(namespace["MESSAGES"]), dict(namespace.get("KINDS", {}))
    )


def _render_message(name: str, table: Message) -> list[str]:
    if isinstance(table, str):
        return [f'    "{name}": "{table}",']
    if not table:
        return [f'    "{name}": {{}},']
    lines = [f'    "{name}": {{']
    for number, (json_name, type_) in sorted(table.items()):
        line = f'        {number}: ("{json_name}", "{type_}"),'
        if len(line) > 88:
            line = f'        {number}: (\n            "{json_name}",\n            "{type_}",\n        ),'
        lines.append(line)
    lines.append("    },")
    return lines


#: The first line of every generated module, Go's convention (which GitHub and
#: linters recognise); ``.gitattributes`` also marks them ``linguist-generated``.
MARKER = "# Code generated by kapi/protobuf/generate.py. DO NOT EDIT."

_HEADER = '''{marker}
"""Protobuf message tables of {what}.

{generated}
JSON names follow the Go json tags. The notation is described in
``kapi.protobuf.schema``.
"""

from __future__ import annotations

from kapi.protobuf.schema import Message

__all__ = [{exports}]

MESSAGES: dict[str, Message] = {{
'''

_ANY_VERSION_KINDS = """
# Options kinds are registered in every group version (metav1.AddToGroupVersion),
# so a DELETE to apps/v1 may carry an apps/v1 DeleteOptions.
ANY_VERSION_KINDS: dict[str, str] = {
    "CreateOptions": "meta.v1.CreateOptions",
    "DeleteOptions": "meta.v1.DeleteOptions",
    "GetOptions": "meta.v1.GetOptions",
    "ListOptions": "meta.v1.ListOptions",
    "PatchOptions": "meta.v1.PatchOptions",
    "UpdateOptions": "meta.v1.UpdateOptions",
}
"""


def _header(module: str) -> str:
    if module == "meta":
        what = "apimachinery's shared types (meta/v1, Quantity, IntOrString, RawExtension)"
        source = "the generated.proto and Go files of k8s.io/apimachinery's meta/v1, resource, intstr, runtime"
        exports = '"ANY_VERSION_KINDS", "MESSAGES"'
    else:
        api_versions, packages = GROUPS[module]
        what = f"the {', '.join(api_versions)} API" + ("s" if len(api_versions) > 1 else "")
        named = ", ".join(packages)
        if all(not package.startswith("k8s.io/") for package in packages):
            named = "k8s.io/api's " + named
        source = "the generated.proto and types.go of " + named
        exports = '"KINDS", "MESSAGES"'
    generated = textwrap.fill(
        f"Generated by ``python -m kapi.protobuf.generate`` from {source}; do not edit.",
        width=88,
    )
    return _HEADER.format(
        marker=MARKER, what=what, generated=generated, exports=exports
    ).rstrip("\n")


def _order(module: str, name: str) -> tuple[int, str]:
    """Messages are sorted by name; ``meta`` takes apimachinery's packages in turn."""
    if module != "meta":
        return (0, name)
    shorts = [short_package(package.replace("/", ".")) for package in META_PACKAGES]
    package = name.rpartition(".")[0]
    return (shorts.index(package) if package in shorts else len(shorts), name)


def render(description: Description) -> str:
    """The text of ``messages_<module>.py`` for ``description``."""
    module = description.module
    lines = [_header(module)]
    for name in sorted(description.messages, key=lambda name: _order(module, name)):
        lines.extend(_render_message(name, description.messages[name]))
    lines.append("}")
    if module == "meta":
        return "\n".join(lines) + "\n" + _ANY_VERSION_KINDS
    lines.append("")
    lines.append("KINDS: dict[str, tuple[str, tuple[str, ...]]] = {")
    # API versions in GROUPS' order, kinds sorted: as describe makes them.
    order = GROUPS[module][0]
    for api_version in sorted(description.kinds, key=order.index):
        package, package_kinds = description.kinds[api_version]
        lines.append(f'    "{api_version}": (')
        lines.append(f'        "{package}",')
        lines.append("        (")
        lines.extend(f'            "{kind}",' for kind in sorted(package_kinds))
        lines.append("        ),")
        lines.append("    ),")
    lines.append("}")
    return "\n".join(lines) + "\n"


def outputs(root: Path) -> dict[str, str]:
    """File name → text of every generated module, from the sources at ``root``."""
    return {f"messages_{module}.py": render(describe(root, module)) for module in MODULES}


def main(argv: list[str]) -> None:
    """``SOURCES OUT`` generates from a source checkout; ``--kubectl [BINARY] OUT``
    refreshes the committed tables from a kubectl binary (default: the one on PATH)."""
    if argv and argv[0] == "--kubectl":
        binary = argv[1] if len(argv) > 2 else shutil.which("kubectl")
        if binary is None:
            raise SystemExit("no kubectl on PATH; name the binary")
        from kapi.protobuf.fromkubectl import from_kubectl  # it imports this module

        files = from_kubectl(binary)
    else:
        files = outputs(Path(argv[0]))
    out = Path(argv[-1])
    for name, text in files.items():
        (out / name).write_text(text)


if __name__ == "__main__":
    main(sys.argv[1:])
