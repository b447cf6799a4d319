"""Virtual resources: create-only types that are answered, never stored
(TokenReview, the access reviews, SelfSubjectReview), and the TokenRequest
subresource of ServiceAccounts. ``kapi.handlers.reviews`` serves them."""

from __future__ import annotations

from kapi.registry.resource import ResourceType, Subresource
from kapi.registry.strategy import Strategy

__all__ = ["TOKEN_SUBRESOURCE", "VIRTUAL_TYPES", "resource_types"]

TOKEN_SUBRESOURCE = Subresource(
    "token",
    "TokenRequest",
    verbs=("create",),
    group="authentication.k8s.io",
    version="v1",
)


def _virtual(
    group: str, kind: str, plural: str, namespaced: bool = False
) -> ResourceType:
    return ResourceType(
        group=group,
        version="v1",
        kind=kind,
        plural=plural,
        singular=kind.lower(),
        namespaced=namespaced,
        strategy=Strategy(),
        verbs=("create",),
        extra={"virtual": plural},
    )


_AUTHN = "authentication.k8s.io"
_AUTHZ = "authorization.k8s.io"

VIRTUAL_TYPES: tuple[ResourceType, ...] = (
    _virtual(_AUTHN, "SelfSubjectReview", "selfsubjectreviews"),
    _virtual(_AUTHN, "TokenReview", "tokenreviews"),
    _virtual(
        _AUTHZ, "LocalSubjectAccessReview", "localsubjectaccessreviews", namespaced=True
    ),
    _virtual(_AUTHZ, "SelfSubjectAccessReview", "selfsubjectaccessreviews"),
    _virtual(_AUTHZ, "SelfSubjectRulesReview", "selfsubjectrulesreviews"),
    _virtual(_AUTHZ, "SubjectAccessReview", "subjectaccessreviews"),
)


def resource_types() -> tuple[ResourceType, ...]:
    """The virtual types, for the catalog (``KAPI_RESOURCE_TYPE_PROVIDERS``)."""
    return VIRTUAL_TYPES
