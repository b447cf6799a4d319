"""Protobuf message tables of the certificates.k8s.io/v1 API.

Field numbers and types follow k8s.io/api's certificates/v1 generated.proto;
JSON names follow the Go json tags. The notation is described in
``kapi.protobuf.schema``.
"""

from __future__ import annotations

from kapi.protobuf.schema import Message

__all__ = ["KINDS", "MESSAGES"]

MESSAGES: dict[str, Message] = {
    "certificates.v1.CertificateSigningRequest": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "certificates.v1.CertificateSigningRequestSpec"),
        3: ("status", "certificates.v1.CertificateSigningRequestStatus"),
    },
    "certificates.v1.CertificateSigningRequestCondition": {
        1: ("type", "*string"),
        2: ("reason", "string"),
        3: ("message", "string"),
        4: ("lastUpdateTime", "meta.v1.Time"),
        5: ("lastTransitionTime", "meta.v1.Time"),
        6: ("status", "*string"),
    },
    "certificates.v1.CertificateSigningRequestList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]certificates.v1.CertificateSigningRequest"),
    },
    "certificates.v1.CertificateSigningRequestSpec": {
        1: ("request", "*bytes"),
        2: ("username", "string"),
        3: ("uid", "string"),
        4: ("groups", "[]string"),
        5: ("usages", "[]string"),
        6: ("extra", "map[string]certificates.v1.ExtraValue"),
        7: ("signerName", "*string"),
        8: ("expirationSeconds", "*int32"),
    },
    "certificates.v1.CertificateSigningRequestStatus": {
        1: ("conditions", "[]certificates.v1.CertificateSigningRequestCondition"),
        2: ("certificate", "bytes"),
    },
    "certificates.v1.ClusterTrustBundle": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "certificates.v1.ClusterTrustBundleSpec"),
    },
    "certificates.v1.ClusterTrustBundleList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]certificates.v1.ClusterTrustBundle"),
    },
    "certificates.v1.ClusterTrustBundleSpec": {
        1: ("signerName", "string"),
        2: ("trustBundle", "*string"),
    },
    "certificates.v1.ExtraValue": "[]string",
    "certificates.v1.PodCertificateRequest": {
        1: ("metadata", "meta.v1.ObjectMeta"),
        2: ("spec", "certificates.v1.PodCertificateRequestSpec"),
        3: ("status", "certificates.v1.PodCertificateRequestStatus"),
    },
    "certificates.v1.PodCertificateRequestList": {
        1: ("metadata", "meta.v1.ListMeta"),
        2: ("items", "[]certificates.v1.PodCertificateRequest"),
    },
    "certificates.v1.PodCertificateRequestSpec": {
        1: ("signerName", "*string"),
        2: ("podName", "*string"),
        3: ("podUID", "*string"),
        4: ("serviceAccountName", "*string"),
        5: ("serviceAccountUID", "*string"),
        6: ("nodeName", "*string"),
        7: ("nodeUID", "*string"),
        8: ("maxExpirationSeconds", "*int32"),
        11: ("unverifiedUserAnnotations", "map[string]string"),
        12: ("stubPKCS10Request", "*bytes"),
    },
    "certificates.v1.PodCertificateRequestStatus": {
        1: ("conditions", "[]meta.v1.Condition"),
        2: ("certificateChain", "string"),
        4: ("notBefore", "meta.v1.Time"),
        5: ("beginRefreshAt", "meta.v1.Time"),
        6: ("notAfter", "meta.v1.Time"),
    },
}

# apiVersion -> (message package, kinds registered in it)
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "certificates.k8s.io/v1": (
        "certificates.v1",
        (
            "CertificateSigningRequest",
            "CertificateSigningRequestList",
            "ClusterTrustBundle",
            "ClusterTrustBundleList",
            "PodCertificateRequest",
            "PodCertificateRequestList",
        ),
    ),
}
