"""/openapi/v2 as gnostic's ``openapi.v2.Document`` protobuf, the only form
client-go asks for: kubectl ``explain --output=plaintext-openapiv2`` reads types,
descriptions and the group-version-kind extensions from it."""

from __future__ import annotations

import json

from kapi.protobuf.wire import iter_fields

_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


def _fields(data: bytes) -> dict[int, list]:
    out: dict[int, list] = {}
    for number, _wire, value in iter_fields(data):
        out.setdefault(number, []).append(value)
    return out


def test_kubectl_explain_reads_the_v2_protobuf(kapi_server, tmp_path):
    out = kapi_server.kubectl(
        "explain",
        "deployments.spec.template.spec.containers.imagePullPolicy",
        "--output=plaintext-openapiv2",
        "--cache-dir",
        str(tmp_path / "cache"),
    ).stdout
    assert "KIND:       Deployment" in out or "KIND:     Deployment" in out, out
    assert "Image pull policy" in out, out
    out = kapi_server.kubectl(
        "explain",
        "hpa.spec",
        "--api-version=autoscaling/v1",
        "--output=plaintext-openapiv2",
        "--cache-dir",
        str(tmp_path / "cache"),
    ).stdout
    assert "targetCPUUtilizationPercentage" in out, out


def test_document_structure_matches_the_json(api):
    response = api.get("/openapi/v2", headers={"Accept": _PROTOBUF})
    assert response.status_code == 200
    assert (
        response.headers["Content-Type"]
        == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    )
    doc = _fields(response.content)
    assert doc[1] == [b"2.0"]
    assert _fields(doc[2][0])[1] == [b"Kubernetes"]
    as_json = api.get("/openapi/v2").json()
    named = [_fields(pair) for pair in _fields(doc[9][0])[1]]
    assert [n[1][0].decode() for n in named] == list(as_json["definitions"])

    deployment = next(n for n in named if n[1][0] == b"io.k8s.api.apps.v1.Deployment")
    schema = _fields(deployment[2][0])
    assert _fields(schema[22][0])[1] == [b"object"]  # type: TypeItem
    extensions = {
        _fields(e)[1][0].decode(): json.loads(_fields(_fields(e)[2][0])[2][0])
        for e in schema[31]
    }
    assert extensions["x-kubernetes-group-version-kind"] == [
        {"group": "apps", "kind": "Deployment", "version": "v1"}
    ]
    properties = [_fields(p)[1][0].decode() for p in _fields(schema[25][0])[1]]
    assert properties == list(
        as_json["definitions"]["io.k8s.api.apps.v1.Deployment"]["properties"]
    )

    etag = response.headers["ETag"]
    again = api.get("/openapi/v2", headers={"Accept": _PROTOBUF, "If-None-Match": etag})
    assert again.status_code == 304
