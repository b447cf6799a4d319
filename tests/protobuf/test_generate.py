"""The committed ``messages_*`` tables are exactly what ``kapi.protobuf.generate``
renders: each file is read back into a description (its ``MESSAGES`` and
``KINDS``), rendered again and compared byte for byte, so a hand edit the
generator would not make (a comment, reordered fields or messages, other
formatting, a missing header) fails here. Whether the *values* agree with
Kubernetes is ``test_upstream.py``'s job. Regenerate with::

    python -m kapi.protobuf.generate PATH/TO/SOURCES kapi/protobuf
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kapi.protobuf import generate, tables

PACKAGE = Path(generate.__file__).resolve().parent


@pytest.mark.parametrize("module", generate.MODULES)
def test_tables_are_the_generators_output(module: str) -> None:
    text = (PACKAGE / f"messages_{module}.py").read_text()
    rendered = generate.render(generate.committed(module, text))
    assert text == rendered, (
        f"messages_{module}.py is not what kapi/protobuf/generate.py renders: "
        "regenerate it instead of editing it"
    )


@pytest.mark.parametrize(
    "edit",
    [
        # a comment added by hand
        lambda text: text.replace(
            '    "apps.v1.DaemonSet": {', '    # why\n    "apps.v1.DaemonSet": {'
        ),
        # two fields swapped
        lambda text: text.replace(
            '        1: ("metadata", "meta.v1.ObjectMeta"),\n'
            '        2: ("data", "runtime.RawExtension"),',
            '        2: ("data", "runtime.RawExtension"),\n'
            '        1: ("metadata", "meta.v1.ObjectMeta"),',
        ),
        # a message appended out of order
        lambda text: text.replace(
            "\n}\n\nKINDS", '\n    "apps.v1.Aardvark": {},\n}\n\nKINDS'
        ),
        # the generated marker dropped
        lambda text: text.partition("\n")[2],
        # two kinds swapped
        lambda text: text.replace(
            '"DaemonSet",\n            "DaemonSetList",',
            '"DaemonSetList",\n            "DaemonSet",',
        ),
    ],
    ids=["comment", "field-order", "message-order", "marker", "kind-order"],
)
def test_a_hand_edit_is_caught(edit) -> None:
    """The comparison above is not vacuous: each kind of hand edit to
    messages_apps.py makes the re-rendered text differ from the edited text."""
    text = (PACKAGE / "messages_apps.py").read_text()
    edited = edit(text)
    assert edited != text
    assert generate.render(generate.committed("apps", edited)) != edited


def test_every_table_module_is_generated_and_loaded() -> None:
    """No hand-written table hides beside the generated ones, every one starts with
    the generated marker, and the kind registry loads every generated module."""
    on_disk = {path.name for path in PACKAGE.glob("messages_*.py")}
    assert on_disk == {f"messages_{module}.py" for module in generate.MODULES}
    for name in on_disk:
        assert (PACKAGE / name).read_text().startswith(generate.MARKER + "\n"), name
    loaded = {module.__name__.rpartition(".")[2] + ".py" for module in tables._GROUPS}
    assert loaded | {"messages_meta.py"} == on_disk


def test_gitattributes_marks_the_tables_generated() -> None:
    attributes = (PACKAGE.parents[1] / ".gitattributes").read_text().splitlines()
    assert "kapi/protobuf/messages_*.py linguist-generated=true" in attributes


def _synthetic_sources(root: Path) -> None:
    """Write, from the committed tables, a source tree in the layout ``describe``
    reads (a ``generated.proto`` and a ``types.go`` per package). It is made up
    here, not Kubernetes' text, and says exactly what the tables say."""
    packages = {  # table package → (import path, proto package)
        generate.short_package(path.replace("/", ".")): (path, path.replace("/", "."))
        for path in generate.META_PACKAGES
    }
    for _versions, group_packages in generate.GROUPS.values():
        for package in group_packages:
            path = generate.import_path(package)
            proto = path.replace("/", ".").replace("-", "_")
            packages[generate.short_package(proto)] = (path, proto)
    kinds = {
        f"{package}.{kind}"
        for module in generate.GROUPS
        for package, names in generate.committed(module).kinds.values()
        for kind in names
    }
    files: dict[str, tuple[list[str], list[str]]] = {}
    for module in generate.MODULES:
        for name, table in generate.committed(module).messages.items():
            package, _, message = name.rpartition(".")
            proto, go = files.setdefault(package, ([], []))
            if isinstance(table, str) and table.startswith("[]"):
                items = f"  repeated {_proto(table[2:])} items = 1;\n"
                proto.append(f"message {message} {{\n{items}}}\n")
                go.append(f"type {message} []{table[2:]}\n")
                continue
            fields = [] if isinstance(table, str) else sorted(table.items())
            proto.append(
                f"message {message} {{\n"
                + "".join(
                    f"  {_label(type_)} {_proto(type_)} f{n} = {n};\n"
                    for n, (_json_name, type_) in fields
                )
                + "}\n"
            )
            struct = ["\tmetav1.TypeMeta `json:\",inline\"`"] if name in kinds else []
            for number, (json_name, type_) in fields:
                go_type = "*x" if type_.startswith("*") else "x"
                json_tag = f"{json_name},omitempty" if json_name else ",inline"
                if type_.startswith("*"):
                    json_tag = json_name
                protobuf = f"bytes,{number},opt,name=f{number}"
                struct.append(
                    f'\tF{number} {go_type} `json:"{json_tag}" protobuf:"{protobuf}"`'
                )
            go.append(f"type {message} struct {{\n" + "\n".join(struct) + "\n}\n")
    for package, (proto, go) in files.items():
        path, proto_package = packages[package]
        directory = root / path
        directory.mkdir(parents=True)
        (directory / "generated.proto").write_text(
            f"package {proto_package};\n\n" + "\n".join(proto)
        )
        (directory / "types.go").write_text("package x\n\n" + "\n".join(go))
    for package in packages.values():  # envelope-only or empty packages
        (root / package[0]).mkdir(parents=True, exist_ok=True)
        generated = root / package[0] / "generated.proto"
        if not generated.exists():
            generated.write_text(f"package {package[1]};\n")


def _label(type_: str) -> str:
    return "repeated" if type_.startswith("[]") else "optional"


def _proto(type_: str) -> str:
    type_ = type_.lstrip("*").removeprefix("[]")
    if type_.startswith("map["):
        key, _, value = type_[4:].partition("]")
        return f"map<{_proto(key)}, {_proto(value)}>"
    if type_ in generate.SCALARS:
        return type_
    package, _, name = type_.rpartition(".")
    return f".{_qualified(package)}.{name}"


def _qualified(package: str) -> str:
    for path in generate.META_PACKAGES:
        proto = path.replace("/", ".")
        if generate.short_package(proto) == package:
            return proto
    for _versions, packages in generate.GROUPS.values():
        for name in packages:
            proto = generate.import_path(name).replace("/", ".").replace("-", "_")
            if generate.short_package(proto) == package:
                return proto
    raise KeyError(package)


def test_describe_reads_sources_back(tmp_path: Path) -> None:
    """The source-checkout path (``describe``) gives the committed tables back from
    sources that say what they say: the extractor and the renderer agree."""
    _synthetic_sources(tmp_path)
    for name, text in generate.outputs(tmp_path).items():
        assert text == (PACKAGE / name).read_text(), name
