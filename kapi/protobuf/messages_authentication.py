"""Protobuf message tables of the authentication.k8s.io/v1 API.

Field numbers and types follow k8s.io/api's authentication/v1 generated.proto;
JSON names follow the Go json tags. The notation is described in
``kapi.protobuf.schema``.
"""

from __future__ import annotations

from kapi.protobuf.schema import Message

__all__ = ["KINDS", "MESSAGES"]

MESSAGES: dict[str, Message] = {
    "authentication.v1.AttestationValue": "[]string",
    "authentication.v1.BoundObjectReference": {
        1: ("kind", "string"),
        2: ("apiVersion", "string"),
        3: ("name", "string"),
        4: ("uid", "string"),
    },
    "authentication.v1.ExtraValue": "[]string",
    "authentication.v1.SelfSubjectReview": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("status", "authentication.v1.SelfSubjectReviewStatus"),
    },
    "authentication.v1.SelfSubjectReviewStatus": {
        1: ("userInfo", "authentication.v1.UserInfo"),
    },
    "authentication.v1.TokenRequest": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "authentication.v1.TokenRequestSpec"),
        3: ("status", "authentication.v1.TokenRequestStatus"),
    },
    "authentication.v1.TokenRequestSpec": {
        1: ("audiences", "[]string"),
        3: ("boundObjectRef", "authentication.v1.BoundObjectReference"),
        4: ("expirationSeconds", "*int64"),
        5: ("attestations", "map[string]authentication.v1.AttestationValue"),
    },
    "authentication.v1.TokenRequestStatus": {
        1: ("token", "*string"),
        2: ("expirationTimestamp", "meta.v1.Time"),
    },
    "authentication.v1.TokenReview": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "authentication.v1.TokenReviewSpec"),
        3: ("status", "authentication.v1.TokenReviewStatus"),
    },
    "authentication.v1.TokenReviewSpec": {
        1: ("token", "string"),
        2: ("audiences", "[]string"),
    },
    "authentication.v1.TokenReviewStatus": {
        1: ("authenticated", "bool"),
        2: ("user", "authentication.v1.UserInfo"),
        3: ("error", "string"),
        4: ("audiences", "[]string"),
    },
    "authentication.v1.UserInfo": {
        1: ("username", "string"),
        2: ("uid", "string"),
        3: ("groups", "[]string"),
        4: ("extra", "map[string]authentication.v1.ExtraValue"),
    },
}

# apiVersion -> (message package, kinds registered in it)
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "authentication.k8s.io/v1": (
        "authentication.v1",
        (
            "SelfSubjectReview",
            "TokenRequest",
            "TokenReview",
        ),
    ),
}
