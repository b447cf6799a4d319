"""Kubernetes protobuf (``application/vnd.kubernetes.protobuf``), both ways.

``decode_object(body)`` turns a request body into the dict a JSON client would
have sent; ``encode_object(obj)`` turns a response object into the body
kube-apiserver would answer (``NotMarshalable`` for kinds without a message, such
as custom resources); ``ProtobufError`` reports malformed input.
"""

from kapi.protobuf.decode import decode_object
from kapi.protobuf.encode import NotMarshalable, encode_object
from kapi.protobuf.wire import ProtobufError

__all__ = ["NotMarshalable", "ProtobufError", "decode_object", "encode_object"]
