"""Content negotiation: which encoding and which transform a client asked for.

The ``Accept`` header is a list of media types with parameters and weights;
the first acceptable one wins (by weight, then order). A type is acceptable
when its encoding is one we write (JSON, YAML, Kubernetes protobuf) and its
``as``/``g``/``v`` parameters name a transform this endpoint offers (``Table``,
``PartialObjectMetadata``, ``APIGroupDiscoveryList``). DRF's default matcher is
not used: it depends on renderer order and ignores these parameters (apiserver
``handlers/negotiation/negotiate.go``).

Protobuf follows kube-apiserver's ``RequestScope.AllowsMediaTypeTransform``: an
endpoint offers it for its own objects only when they have a protobuf message
(built-in kinds; a custom resource's endpoint leaves it out, like the CRD
handler's ``StandardSerializers``), ``as=PartialObjectMetadata[List]`` may be
protobuf on any resource endpoint, and ``as=Table`` is JSON or YAML only. A
client that accepts ``application/vnd.kubernetes.protobuf,application/json``
therefore gets JSON where protobuf is not offered, and 406 only when it accepts
nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

from rest_framework.negotiation import BaseContentNegotiation

from kapi import errors

__all__ = [
    "PROTOBUF",
    "KubernetesContentNegotiation",
    "MediaType",
    "Output",
    "negotiate_output",
    "parse_accept",
]

PROTOBUF = "application/vnd.kubernetes.protobuf"
ACCEPTED_MEDIA_TYPES = ["application/json", "application/yaml", PROTOBUF]
_MEDIA_TYPES = {"json": "application/json", "yaml": "application/yaml", "protobuf": PROTOBUF}
#: The transforms kube encodes as protobuf (``metav1.Table`` has no message).
_PROTOBUF_TRANSFORMS = frozenset({"PartialObjectMetadata", "PartialObjectMetadataList"})


@dataclass(frozen=True)
class MediaType:
    type: str
    subtype: str
    params: dict
    q: float = 1.0

    @property
    def full(self) -> str:
        return f"{self.type}/{self.subtype}"


@dataclass(frozen=True)
class Output:
    """The negotiated answer: ``encoding`` is "json", "yaml" or "protobuf";
    ``transform`` is None or (as, group, version), e.g. ("Table", "meta.k8s.io", "v1")."""

    encoding: str
    transform: tuple[str, str, str] | None = None

    @property
    def content_type(self) -> str:
        base = _MEDIA_TYPES[self.encoding]
        if self.transform:
            as_, g, v = self.transform
            return f"{base};as={as_};g={g};v={v}"
        return base

    def content_type_for(self, code: int) -> str:
        """The ``Content-Type`` of an answer with this code: an error is a
        ``Status``, not the transform asked for, so it drops the parameters."""
        if code < 400 or self.transform is None:
            return self.content_type
        return _MEDIA_TYPES[self.encoding]


def parse_accept(header: str) -> list[MediaType]:
    out: list[tuple[float, int, MediaType]] = []
    for index, item in enumerate(header.split(",")):
        item = item.strip()
        if not item:
            continue
        pieces = [p.strip() for p in item.split(";")]
        full = pieces[0].lower()
        if "/" not in full:
            continue
        type_, subtype = full.split("/", 1)
        params: dict[str, str] = {}
        q = 1.0
        for piece in pieces[1:]:
            if "=" not in piece:
                continue
            k, v = piece.split("=", 1)
            k, v = k.strip().lower(), v.strip().strip('"')
            if k == "q":
                try:
                    q = float(v)
                except ValueError:
                    q = 0.0
            else:
                params[k] = v
        if q <= 0:
            continue
        out.append((-q, index, MediaType(type_, subtype, params, q)))
    out.sort(key=lambda t: (t[0], t[1]))
    return [m for _, _, m in out]


def _encoding(mt: MediaType) -> str | None:
    if mt.type == "*" and mt.subtype == "*":
        return "json"
    if mt.type != "application":
        return None
    if mt.subtype in ("json", "*"):
        return "json"
    if mt.subtype == "yaml":
        return "yaml"
    if mt.subtype == "vnd.kubernetes.protobuf":
        return "protobuf"
    return None


def negotiate_output(
    accept: str | None,
    transforms: tuple[tuple[str, str, str], ...] = (),
    protobuf: bool = False,
) -> Output:
    """Pick the output for ``accept`` among the encodings and ``transforms`` offered.

    ``protobuf`` says whether the endpoint's own objects may be answered as
    protobuf; the PartialObjectMetadata transforms may be whenever offered.
    Raises 406 NotAcceptable when nothing offered is acceptable.
    """
    if not accept or not accept.strip():
        return Output("json")
    for mt in parse_accept(accept):
        encoding = _encoding(mt)
        if encoding is None:
            continue
        as_ = mt.params.get("as")
        if not as_:
            if encoding == "protobuf" and not protobuf:
                continue
            return Output(encoding)
        if encoding == "protobuf" and as_ not in _PROTOBUF_TRANSFORMS:
            continue
        wanted = (as_, mt.params.get("g", ""), mt.params.get("v", ""))
        if wanted in transforms:
            return Output(encoding, wanted)
    raise errors.not_acceptable(ACCEPTED_MEDIA_TYPES)


class KubernetesContentNegotiation(BaseContentNegotiation):
    """Hands DRF the renderer for the negotiated encoding.

    Views that offer transforms negotiate first (``negotiate_output``) and store
    the result on ``request.kapi_output``; everything else gets plain JSON/YAML.
    """

    def select_parser(self, request, parsers):
        content_type = (request.content_type or "").split(";")[0].strip().lower()
        if not content_type:
            # kube decodes a body without Content-Type as JSON (the first
            # supported type); the official Python client sends none.
            content_type = "application/json"
        for parser in parsers:
            if parser.media_type == content_type:
                return parser
        return None

    def select_renderer(self, request, renderers, format_suffix=None):
        output = getattr(request, "kapi_output", None)
        if output is None:
            try:
                output = negotiate_output(request.META.get("HTTP_ACCEPT"))
            except errors.StatusError:
                output = Output("json")
        for renderer in renderers:
            if renderer.format == output.encoding:
                return renderer, output.content_type
        return renderers[0], renderers[0].media_type
