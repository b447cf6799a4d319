"""The committed ``messages_*`` tables are exactly what the generator makes of the
vendored published sources (``tests/protobuf/proto``), so an edit by hand, a new
Kubernetes version vendored without regenerating, or a generator change without
its output all fail here. Regenerate with::

    python kapi/protobuf/generate.py tests/protobuf/proto kapi/protobuf
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kapi.protobuf import generate, tables

ROOT = Path(__file__).resolve().parent / "proto"
PACKAGE = Path(generate.__file__).resolve().parent
OUTPUTS = generate.outputs(ROOT)


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_tables_match_the_generator(name: str) -> None:
    committed = (PACKAGE / name).read_text()
    assert committed == OUTPUTS[name], (
        f"{name} drifted from its sources: run python kapi/protobuf/generate.py "
        "tests/protobuf/proto kapi/protobuf"
    )


def test_every_table_module_is_generated_and_loaded() -> None:
    """No hand-written table hides beside the generated ones, and the kind
    registry loads every generated module."""
    on_disk = {path.name for path in PACKAGE.glob("messages_*.py")}
    assert on_disk == set(OUTPUTS)
    loaded = {module.__name__.rpartition(".")[2] + ".py" for module in tables._GROUPS}
    assert loaded | {"messages_meta.py"} == set(OUTPUTS)


def test_generated_tables_agree_with_protoc() -> None:
    """Every field of every generated message has protoc's number and name
    (or its Go JSON name) in the compiled published .proto files."""
    from tests.protobuf.kube_proto import _JSON_NAMES, _pool

    pool = _pool()
    prefixes = {
        "meta.v1.": "k8s.io.apimachinery.pkg.apis.meta.v1.",
        "resource.": "k8s.io.apimachinery.pkg.api.resource.",
        "intstr.": "k8s.io.apimachinery.pkg.util.intstr.",
        "runtime.": "k8s.io.apimachinery.pkg.runtime.",
    }
    checked = 0
    for name, table in tables.MESSAGES.items():
        if not isinstance(table, dict):
            continue
        # resource.Quantity is apimachinery's; resource.v1.* is resource.k8s.io.
        prefix = next(
            (
                p
                for p in prefixes
                if name.startswith(p) and (p == "meta.v1." or name.count(".") == 1)
            ),
            None,
        )
        if prefix:
            full = prefixes[prefix] + name.removeprefix(prefix)
        elif name.startswith("apiregistration."):  # kube-aggregator's
            full = "k8s.io.kube_aggregator.pkg.apis." + name
        elif name.startswith("apiextensions."):  # apiextensions-apiserver's
            full = "k8s.io.apiextensions_apiserver.pkg.apis." + name
        else:
            full = "k8s.io.api." + name
        descriptor = pool.FindMessageTypeByName(full)
        assert set(table) == set(descriptor.fields_by_number), name
        for number, (json_name, _type) in table.items():
            field = descriptor.fields_by_number[number]
            if json_name:
                assert json_name == _JSON_NAMES.get((full, field.name), field.name), (
                    name,
                    number,
                )
            checked += 1
    assert checked > 2000
