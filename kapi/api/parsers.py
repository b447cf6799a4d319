"""Body parsers: a media type and one method each (DRF ``BaseParser``).

Bodies are limited to 3 MiB (kube-apiserver's limit) before they are decoded.
"""

from __future__ import annotations

import orjson
import yaml
from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

from kapi import errors

__all__ = ["MAX_BODY_BYTES", "JSONParser", "YAMLParser", "read_body"]

MAX_BODY_BYTES = 3 * 1024 * 1024

try:
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader


def read_body(stream) -> bytes:
    data = stream.read(MAX_BODY_BYTES + 1) if stream is not None else b""
    if len(data) > MAX_BODY_BYTES:
        raise errors.request_entity_too_large("Request entity too large: limit is 3145728")
    return data


class JSONParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        raw = read_body(stream)
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise ParseError(f"error decoding JSON: {exc}") from None


class YAMLParser(BaseParser):
    media_type = "application/yaml"

    def parse(self, stream, media_type=None, parser_context=None):
        raw = read_body(stream)
        try:
            return yaml.load(raw, Loader=_Loader)
        except yaml.YAMLError as exc:
            raise ParseError(f"error converting YAML to JSON: {exc}") from None
