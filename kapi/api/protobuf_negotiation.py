"""Which resource endpoints answer protobuf: built-in kinds yes, custom resources no.

A resource view negotiates before it knows its resource type, offering
protobuf; once the type is known, ``narrow`` takes the offer back where kube
would not have made it: a custom resource (the CRD handler's
``StandardSerializers`` leave protobuf out, for its status and scale
subresources too) or any kind without a protobuf message (kapi's own
``sync.kapi.dev`` kinds). The client's next acceptable type then wins, so
``application/vnd.kubernetes.protobuf,application/json`` gets JSON; a client
that accepts protobuf only gets 406, written as JSON as kube writes
negotiation errors (``WriteRawJSON``).

``as=Table`` is taken back the same way where kube's endpoint has no
``TableConvertor``: the create-only resources and subresources (the reviews,
a ServiceAccount's ``token``), which hold no metadata to show.
"""

from __future__ import annotations

from kapi import errors
from kapi.api.negotiation import negotiate_output
from kapi.protobuf.encode import is_marshalable
from kapi.registry.resource import ResourceType

__all__ = ["endpoint_kind", "narrow", "serves_protobuf", "serves_tables"]


def endpoint_kind(rt: ResourceType, subresource: str | None) -> tuple[str, str]:
    """(apiVersion, kind) of the objects an endpoint reads and writes."""
    sub = rt.subresource(subresource) if subresource else None
    if sub is None:
        return rt.api_version, rt.kind
    group = rt.group if sub.group is None else sub.group
    version = sub.version or rt.version
    return (f"{group}/{version}" if group else version), sub.kind


def serves_protobuf(rt: ResourceType, subresource: str | None) -> bool:
    """Whether the endpoint answers its own objects as protobuf."""
    if "crd" in rt.extra:
        return False
    return is_marshalable(*endpoint_kind(rt, subresource))


def serves_tables(rt: ResourceType, subresource: str | None) -> bool:
    """Whether the endpoint converts its objects to a ``Table``."""
    sub = rt.subresource(subresource) if subresource else None
    verbs = sub.verbs if sub is not None else rt.verbs
    return tuple(verbs) != ("create",)


def narrow(view, request, rt: ResourceType, subresource: str | None) -> None:
    """Renegotiate without protobuf or ``as=Table`` where this endpoint does not
    serve them.

    Updates ``request.kapi_output`` and DRF's chosen renderer; raises 406 (to be
    written as JSON) when the client accepts nothing else.
    """
    output = request.kapi_output
    protobuf = output.encoding == "protobuf" and output.transform is None
    table = output.transform is not None and output.transform[0] == "Table"
    if not (protobuf and not serves_protobuf(rt, subresource)) and not (
        table and not serves_tables(rt, subresource)
    ):
        return
    transforms = view.transforms
    if not serves_tables(rt, subresource):
        transforms = tuple(t for t in transforms if t[0] != "Table")
    renderers = {renderer.format: renderer for renderer in view.get_renderers()}
    try:
        output = negotiate_output(
            request.META.get("HTTP_ACCEPT"),
            transforms,
            serves_protobuf(rt, subresource),
        )
    except errors.StatusError:
        request.kapi_output = None
        request.accepted_renderer = renderers["json"]
        request.accepted_media_type = "application/json"
        raise
    request.kapi_output = output
    request.accepted_renderer = renderers[output.encoding]
    request.accepted_media_type = output.content_type
