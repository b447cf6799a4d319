"""Protobuf body parser: ``application/vnd.kubernetes.protobuf`` requests as JSON.

kubectl's typed clients send built-in objects as Kubernetes protobuf; the parser
decodes them into the dict a JSON client would have sent, so handlers never see
the wire format. Responses are encoded by ``renderers.ProtobufRenderer``.
"""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

from kapi.api.parsers import read_body
from kapi.protobuf import ProtobufError, decode_object

__all__ = ["ProtobufParser"]


class ProtobufParser(BaseParser):
    media_type = "application/vnd.kubernetes.protobuf"

    def parse(self, stream, media_type=None, parser_context=None) -> dict[str, Any]:
        # read_body enforces the 3 MiB limit (413) before any decoding work.
        raw = read_body(stream)
        try:
            return decode_object(raw)
        except ProtobufError as exc:
            raise ParseError(str(exc)) from None
