"""Renderers: a media type and one method each (DRF ``BaseRenderer``)."""

from __future__ import annotations

import logging

import orjson
import yaml
from rest_framework.renderers import BaseRenderer

from kapi import errors
from kapi.handlers.cachedlist import EncodedJSON
from kapi.protobuf.encode import NotMarshalable, encode_object
from kapi.protobuf.wire import ProtobufError

__all__ = [
    "JSONRenderer",
    "ProtobufRenderer",
    "YAMLRenderer",
    "dump_json",
    "dump_protobuf",
    "dump_yaml",
    "wants_pretty",
]

log = logging.getLogger("kapi.api")

_PRETTY_AGENTS = ("curl", "Wget", "Mozilla/")

try:  # the C dumper is several times faster where libyaml is available
    _Dumper = yaml.CSafeDumper
except AttributeError:  # pragma: no cover
    _Dumper = yaml.SafeDumper


def wants_pretty(request) -> bool:
    """kube pretty-prints on ``?pretty=true`` or for curl/wget/browsers."""
    if request is None:
        return False
    value = request.GET.get("pretty") if hasattr(request, "GET") else None
    if value is not None:
        return value.lower() in ("true", "1")
    agent = request.META.get("HTTP_USER_AGENT", "") if hasattr(request, "META") else ""
    return agent.startswith(_PRETTY_AGENTS)


def dump_json(data, pretty: bool = False) -> bytes:
    option = orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS
    if pretty:
        option |= orjson.OPT_INDENT_2
    return orjson.dumps(data, option=option)


def dump_yaml(data) -> bytes:
    return yaml.dump(
        data, Dumper=_Dumper, default_flow_style=False, sort_keys=False, allow_unicode=True
    ).encode()


class JSONRenderer(BaseRenderer):
    media_type = "application/json"
    format = "json"
    charset = None

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        if isinstance(data, EncodedJSON):  # a list from the cache, written as it is
            return data.line
        request = (renderer_context or {}).get("request")
        return dump_json(data, wants_pretty(request))


class YAMLRenderer(BaseRenderer):
    media_type = "application/yaml"
    format = "yaml"
    charset = None

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        return dump_yaml(data)


def dump_protobuf(data) -> tuple[bytes, int | None]:
    """Encode ``data`` as Kubernetes protobuf; on failure, the protobuf Status
    kube-apiserver's ``SerializeObject`` writes instead, and its code.

    A kind without a message is 406 NotAcceptable (``errNotMarshalable``);
    negotiation keeps those away, so it only happens if a handler answers
    with a kind its endpoint did not announce. A value that does not fit its
    field is a 500.
    """
    try:
        return encode_object(data), None
    except NotMarshalable as exc:
        status = errors.status_failure(406, "NotAcceptable", str(exc))
    except ProtobufError as exc:
        log.error("cannot encode %s as protobuf: %s", data.get("kind"), exc)
        status = errors.internal_error(f"unable to encode the object as protobuf: {exc}").status
    return encode_object(status), status["code"]


class ProtobufRenderer(BaseRenderer):
    media_type = "application/vnd.kubernetes.protobuf"
    format = "protobuf"
    charset = None

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        body, code = dump_protobuf(data)
        response = (renderer_context or {}).get("response")
        if code is not None and response is not None and response.status_code < 400:
            response.status_code = code  # the error's code replaces a success
        return body
