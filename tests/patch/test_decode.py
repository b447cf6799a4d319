"""Body decoding reports duplicate keys with their paths, for fieldValidation."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kapi.patch import BadPatch, decode_json, decode_yaml
from kapi.patch.decode import _hook, find_paths


def test_json_duplicates_have_paths():
    doc, dups = decode_json(
        b'{"metadata":{"name":"a","name":"b"},"data":{"x":"1"},"data":{"y":"2"}}'
    )
    assert doc == {"metadata": {"name": "b"}, "data": {"y": "2"}}
    assert dups == ["metadata.name", "data"]


def test_yaml_duplicates_have_paths():
    doc, dups = decode_yaml(b"data:\n  a: '1'\n  a: '2'\n")
    assert doc == {"data": {"a": "2"}}
    assert dups == ["data.a"]


def test_json_is_accepted_as_yaml():
    assert decode_yaml(b'{"a": 1}') == ({"a": 1}, [])


@pytest.mark.parametrize("raw", [b"{", b"[1,", b"nope"])
def test_invalid_json(raw):
    with pytest.raises(BadPatch):
        decode_json(raw)


# Bodies written by hand: objects as lists of pairs (so keys may repeat),
# whitespace (or none) around the colons, keys and strings that contain
# quotes and colons, numbers past 64 bits.
_keys = st.sampled_from(["a", "b", "", 'q":', "k :", "é"])
_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(["", "x", '":', '" :', "\\"]),
)
_bodies = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(lambda xs: ("list", xs)),
        st.lists(st.tuples(_keys, inner, st.sampled_from(["", " ", "\n\t "])), max_size=4).map(
            lambda pairs: ("object", pairs)
        ),
    ),
    max_leaves=12,
)


def _text(node) -> str:
    if isinstance(node, tuple) and node[0] == "list":
        return "[" + ",".join(_text(v) for v in node[1]) + "]"
    if isinstance(node, tuple):
        return "{" + ",".join(f"{json.dumps(k)}{ws}:{ws}{_text(v)}" for k, v, ws in node[1]) + "}"
    return json.dumps(node)


@settings(max_examples=300, deadline=None)
@given(_bodies)
def test_json_decoding_agrees_with_the_exact_decoder(body):
    """The fast decoder finds the same document and the same duplicates as
    ``json`` with a hook on every object, whatever the body."""
    raw = _text(body).encode()
    duplicates: list = []
    want = json.loads(raw, object_pairs_hook=_hook(duplicates))
    doc, found = decode_json(raw)
    assert doc == want and [type(x) for x in _flat(doc)] == [type(x) for x in _flat(want)]
    assert found == find_paths(want, duplicates)


def _flat(node):
    if isinstance(node, dict):
        return [x for v in node.values() for x in _flat(v)]
    if isinstance(node, list):
        return [x for v in node for x in _flat(v)]
    return [node]
