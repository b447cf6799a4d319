"""Output negotiation with protobuf, as kube's ``AllowsMediaTypeTransform`` decides it."""

from __future__ import annotations

import os

import django
import pytest

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kapi.settings")
django.setup()

from kapi.api.negotiation import Output, negotiate_output  # noqa: E402 (after django.setup())
from kapi.api.transforms import OBJECT_TRANSFORMS  # noqa: E402
from kapi.errors import StatusError  # noqa: E402

PB = "application/vnd.kubernetes.protobuf"
POM = ("PartialObjectMetadataList", "meta.k8s.io", "v1")


@pytest.mark.parametrize(
    ("accept", "protobuf", "expected"),
    [
        (f"{PB},application/json", True, Output("protobuf")),
        (f"{PB},application/json", False, Output("json")),
        (f"application/json;q=0.9,{PB}", True, Output("protobuf")),
        ("*/*", True, Output("json")),
        (f"{PB};as=Table;g=meta.k8s.io;v=v1,application/json", True, Output("json")),
        (f"{PB};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json", False, Output("protobuf", POM)),
        (f"{PB};stream=watch", True, Output("protobuf")),
    ],
)
def test_protobuf_is_chosen_where_kube_chooses_it(accept, protobuf, expected) -> None:
    assert negotiate_output(accept, OBJECT_TRANSFORMS, protobuf) == expected


@pytest.mark.parametrize(
    ("accept", "protobuf"),
    [(PB, False), (f"{PB};as=Table;g=meta.k8s.io;v=v1", True), (f"{PB};q=0", True)],
)
def test_protobuf_only_clients_get_406_where_it_is_not_offered(accept, protobuf) -> None:
    with pytest.raises(StatusError) as caught:
        negotiate_output(accept, OBJECT_TRANSFORMS, protobuf)
    assert caught.value.code == 406
    assert PB in caught.value.status["message"]


def test_content_types() -> None:
    assert Output("protobuf").content_type == PB
    assert Output("protobuf", POM).content_type == f"{PB};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
