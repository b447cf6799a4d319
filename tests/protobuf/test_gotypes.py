"""``kapi.protobuf.gotypes``: Go struct tags, and what it does with a file that is
not a Go binary it can read."""

from __future__ import annotations

from pathlib import Path

import pytest

from kapi.protobuf import gotypes


def test_parse_tag_reads_each_key_as_reflect_does() -> None:
    tag = 'json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"'
    assert gotypes.parse_tag(tag, "json") == "metadata,omitempty"
    assert gotypes.parse_tag(tag, "protobuf") == "bytes,1,opt,name=metadata"
    assert gotypes.parse_tag(tag, "yaml") is None
    assert gotypes.parse_tag('a:"x\\"y" b:"z"', "b") == "z"
    assert gotypes.parse_tag("", "json") is None


def test_protobuf_tag() -> None:
    tag = 'protobuf:"bytes,1,rep,name=limits,casttype=ResourceList,castkey=ResourceName"'
    assert gotypes.protobuf_tag(tag) == gotypes.ProtobufTag("bytes", 1, "rep", "limits")
    assert gotypes.protobuf_tag('json:",inline" protobuf:"-"') is None
    assert gotypes.protobuf_tag('json:",inline"') is None


@pytest.mark.parametrize(
    "content",
    [b"#!/bin/sh\necho kubectl\n", b"\x7fELF\x01\x01" + bytes(64)],
    ids=["script", "elf32"],
)
def test_a_file_it_cannot_read_is_a_value_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "kubectl"
    path.write_bytes(content)
    with pytest.raises(ValueError):
        gotypes.read(path)
