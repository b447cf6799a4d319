"""Body decoding reports duplicate keys with their paths, for fieldValidation."""

from __future__ import annotations

import pytest

from kapi.patch import BadPatch, decode_json, decode_yaml


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
