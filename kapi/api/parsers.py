"""Body parsers: a media type and one method each (DRF ``BaseParser``).

Bodies are limited to 3 MiB (kube-apiserver's limit) before they are decoded;
YAML alias bombs and too deeply nested documents are refused (``kapi.api.limits``).
"""

from __future__ import annotations

from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser

from kapi import errors
from kapi.api.limits import check_depth, check_yaml
from kapi.handlers.patch import PatchBody
from kapi.patch import BadPatch, decode_json, decode_yaml, yaml_duplicate_keys

__all__ = [
    "MAX_BODY_BYTES",
    "ApplyPatchParser",
    "Document",
    "JSONParser",
    "JSONPatchParser",
    "MergePatchParser",
    "StrategicMergePatchParser",
    "YAMLParser",
    "read_body",
]

MAX_BODY_BYTES = 3 * 1024 * 1024



class Document(dict):
    """A decoded object body that carries the duplicate keys seen while decoding
    (for ``fieldValidation``)."""

    duplicate_fields: tuple[str, ...] | list[str] = ()
    #: The YAML decoder's errors for them (``line 5: key "a" already set in map``).
    yaml_duplicates: tuple[str, ...] | list[str] = ()


def _document(doc, duplicates: list[str], yaml_duplicates: list[str] = ()):
    if duplicates and isinstance(doc, dict):
        doc = Document(doc)
        doc.duplicate_fields = duplicates
        doc.yaml_duplicates = list(yaml_duplicates)
    return doc


def read_body(stream) -> bytes:
    data = stream.read(MAX_BODY_BYTES + 1) if stream is not None else b""
    if len(data) > MAX_BODY_BYTES:
        raise errors.request_entity_too_large("Request entity too large: limit is 3145728")
    return data


class JSONParser(BaseParser):
    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            doc, duplicates = decode_json(read_body(stream))
        except BadPatch as exc:
            raise ParseError(str(exc)) from None
        except RecursionError:
            raise errors.bad_request("the request body is nested too deeply") from None
        check_depth(doc)
        return _document(doc, duplicates)


class YAMLParser(BaseParser):
    media_type = "application/yaml"

    def parse(self, stream, media_type=None, parser_context=None):
        raw = read_body(stream)
        check_yaml(raw)
        try:
            doc, duplicates = decode_yaml(raw)
        except BadPatch as exc:
            raise ParseError(str(exc)) from None
        check_depth(doc)
        return _document(doc, duplicates, yaml_duplicate_keys(raw) if duplicates else ())


class _PatchParser(BaseParser):
    """Hands the raw body and its patch type to ``kapi.handlers.patch``."""

    def parse(self, stream, media_type=None, parser_context=None):
        raw = read_body(stream)
        if self.media_type == "application/apply-patch+yaml":
            check_yaml(raw)
        return PatchBody(raw, self.media_type)


class JSONPatchParser(_PatchParser):
    media_type = "application/json-patch+json"


class MergePatchParser(_PatchParser):
    media_type = "application/merge-patch+json"


class StrategicMergePatchParser(_PatchParser):
    media_type = "application/strategic-merge-patch+json"


class ApplyPatchParser(_PatchParser):
    media_type = "application/apply-patch+yaml"
