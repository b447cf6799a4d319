"""Kubernetes protobuf request bodies, decoded into the JSON objects kapi stores.

``decode_object(body)`` turns an ``application/vnd.kubernetes.protobuf`` body into
the dict a JSON client would have sent; ``ProtobufError`` reports malformed input.
"""

from kapi.protobuf.decode import decode_object
from kapi.protobuf.wire import ProtobufError

__all__ = ["ProtobufError", "decode_object"]
