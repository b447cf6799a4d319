"""Hostile input to the patch engines and the body decoders (hypothesis).

A fixed budget of generated cases with a fixed seed (``derandomize``): the
decoders and the JSON, merge and strategic merge engines may refuse input
only with their own errors (``PatchError``: a 400/422 at the edge), never with
anything else (a 500). Findings are kept as explicit ``@example`` cases.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kapi.patch import (
    JSON_PATCH,
    MERGE_PATCH,
    STRATEGIC_MERGE_PATCH,
    PatchError,
    apply_patch,
    decode_json,
    decode_yaml,
)
from kapi.schema import TypeSchema, builtin_definitions

#: Cases per property; KAPI_FUZZ_CASES raises it for a longer local run.
CASES = int(os.environ.get("KAPI_FUZZ_CASES", "300"))
FUZZ = settings(
    max_examples=CASES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)

_keys = st.sampled_from(
    ["metadata", "spec", "containers", "name", "image", "ports", "containerPort",
     "$patch", "$retainKeys", "$setElementOrder/containers", "$deleteFromPrimitiveList/args",
     "args", "env", "value", "labels", "a", "b", "0", "-", ""]
) | st.text(max_size=8)
_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(
    max_size=10)
json_values = st.recursive(
    _scalars,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(_keys, children, max_size=4),
    max_leaves=25,
)
_pointers = st.lists(_keys | st.integers(-1, 3).map(str), max_size=4).map(
    lambda parts: "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in parts)
) | st.text(max_size=10)
json_patch_ops = st.lists(
    st.fixed_dictionaries(
        {"op": st.sampled_from(["add", "remove", "replace", "move", "copy", "test", "bogus"]),
         "path": _pointers},
        optional={"value": json_values, "from": _pointers},
    ) | json_values,
    max_size=5,
) | json_values

_defs = builtin_definitions()
POD = TypeSchema(_defs["io.k8s.api.core.v1.Pod"], _defs)


def _only_patch_errors(call, *args) -> None:
    try:
        call(*args)
    except PatchError:
        pass


@FUZZ
@given(st.binary(max_size=200))
@example(b"\xff")
@example(b'{"a": 1, "a": 2}')
@example(b"[" * 50)
def test_decode_json_bytes(raw: bytes) -> None:
    _only_patch_errors(decode_json, raw)


@FUZZ
@given(st.binary(max_size=200) | st.text(max_size=200).map(str.encode))
@example(b"\x80")  # finding: ReaderError escaped (a 500)
@example(b"\x00")
@example(b"a: &x [*x]")
@example(b"!!python/object:os.system {}")
@example(b"a: 1\na: 2")
@example(b"? [a]\n: 1")  # finding: unhashable key, TypeError (a 500)
@example(b"- !!binary AAAA")
@example(b"2001-01-01: x")
def test_decode_yaml_bytes(raw: bytes) -> None:
    _only_patch_errors(decode_yaml, raw)


@FUZZ
@given(json_values, json_patch_ops)
@example({"a": [1]}, [{"op": "add", "path": "/a/-", "value": 2}])
@example({"a": 1}, [{"op": "move", "from": "/a", "path": "/a/b"}])
@example({"a": [1]}, [{"op": "remove", "path": "/a/01"}])
def test_json_patch(original, patch) -> None:
    _only_patch_errors(apply_patch, JSON_PATCH, original, patch, None)


@FUZZ
@given(st.dictionaries(_keys, json_values, max_size=4), json_values)
def test_merge_patch(original, patch) -> None:
    _only_patch_errors(apply_patch, MERGE_PATCH, original, patch, None)


@FUZZ
@given(st.dictionaries(_keys, json_values, max_size=4), json_values,
       st.sampled_from([None, POD]))
@example({"spec": {"containers": [{"name": "a"}]}},
         {"spec": {"containers": [{"$patch": "delete"}]}}, POD)
@example({"spec": {"containers": [{"name": "a"}]}},
         {"spec": {"$setElementOrder/containers": [1]}}, POD)
def test_strategic_merge_patch(original, patch, schema) -> None:
    _only_patch_errors(apply_patch, STRATEGIC_MERGE_PATCH, original, patch, schema)
