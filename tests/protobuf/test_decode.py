"""Protobuf bodies decode to the JSON a JSON client would send for the same object.

Bodies are built with ``tests.protobuf.encoder`` so each test states exactly what
is on the wire.
"""

from __future__ import annotations

import base64

import pytest

from kapi.protobuf import ProtobufError, decode_object
from kapi.protobuf.decode import decode_message, format_go_duration
from tests.protobuf.encoder import envelope, message, packed, string, varint


def meta(*fields: bytes) -> bytes:
    return message(1, *fields)


def test_configmap_with_maps_and_pointer_zero() -> None:
    """Maps become objects; a present *bool false stays; zero value strings go."""
    body = envelope(
        "v1",
        "ConfigMap",
        meta(string(1, "cm"), string(2, ""), string(3, "default"), varint(7, 0)),
        message(2, string(1, "a"), string(2, "b")),
        message(2, string(1, "empty")),
        message(3, string(1, "bin"), string(2, b"\x00\xff")),
        varint(4, 0),
    )
    assert decode_object(body) == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "namespace": "default"},
        "data": {"a": "b", "empty": ""},
        "binaryData": {"bin": base64.b64encode(b"\x00\xff").decode()},
        "immutable": False,
    }


def test_unknown_fields_are_skipped() -> None:
    """Fields newer than the tables are ignored, whatever their wire type."""
    body = envelope(
        "v1",
        "Namespace",
        meta(string(1, "ns"), varint(99, 7), string(100, "x")),
        varint(50, 1),
    )
    assert decode_object(body) == {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": "ns"},
    }


def test_repeated_scalars_packed_and_unpacked() -> None:
    """Repeated int64 accept both the unpacked and the packed encoding, in order."""
    context = (
        varint(4, 1) + varint(4, -2) + packed(4, [3, 4]) + varint(2, 0) + varint(3, 1)
    )
    assert decode_message(context, "core.v1.PodSecurityContext") == {
        "supplementalGroups": [1, -2, 3, 4],
        "runAsUser": 0,
        "runAsNonRoot": True,
    }


def test_pod_inline_volume_source_and_special_types() -> None:
    """Embedded Go structs are inlined; IntOrString, Quantity and Time decode."""
    container = message(
        2,
        string(1, "app"),
        string(2, "nginx"),
        message(6, varint(3, 8080), string(4, "TCP")),
        message(
            8,
            message(1, string(1, "cpu"), message(2, string(1, "100m"))),
        ),
        message(
            10,
            message(1, message(2, string(1, "/healthz"), message(2, varint(2, 8080)))),
            varint(2, 5),
        ),
    )
    volume = message(1, string(1, "data"), message(2, message(2, string(1, "Memory"))))
    body = envelope(
        "v1",
        "Pod",
        meta(string(1, "p"), message(8, varint(1, 1700000000))),
        message(2, volume, container, string(3, "Always")),
    )
    assert decode_object(body) == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "creationTimestamp": "2023-11-14T22:13:20Z"},
        "spec": {
            "volumes": [{"name": "data", "emptyDir": {"medium": "Memory"}}],
            "containers": [
                {
                    "name": "app",
                    "image": "nginx",
                    "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                    "resources": {"limits": {"cpu": "100m"}},
                    "livenessProbe": {
                        "httpGet": {"path": "/healthz", "port": 8080},
                        "initialDelaySeconds": 5,
                    },
                }
            ],
            "restartPolicy": "Always",
        },
    }


def test_zero_time_is_left_out() -> None:
    """An empty metav1.Time (the zero time) is JSON null, so it is dropped."""
    body = envelope("v1", "Namespace", meta(string(1, "ns"), message(8)))
    assert decode_object(body)["metadata"] == {"name": "ns"}


def test_int_or_string() -> None:
    """IntOrString type 1 is its strVal; type 0 its intVal (even when zero)."""
    percent = message(1, varint(1, 1), string(3, "50%"))
    body = envelope("policy/v1", "PodDisruptionBudget", meta(), message(2, percent))
    assert decode_object(body)["spec"] == {"minAvailable": "50%"}
    assert decode_message(b"", "intstr.IntOrString") == 0


def test_micro_time_keeps_microseconds() -> None:
    """MicroTime is RFC 3339 with six fractional digits, truncated from nanos."""
    spec = message(4, varint(1, 1700000000), varint(2, 123456789))
    body = envelope("coordination.k8s.io/v1", "Lease", meta(), message(2, spec))
    assert decode_object(body)["spec"] == {"renewTime": "2023-11-14T22:13:20.123456Z"}


@pytest.mark.parametrize(
    ("nanos", "text"),
    [
        (0, "0s"),
        (1, "1ns"),
        (1500, "1.5µs"),
        (2_000_000, "2ms"),
        (1_500_000_000, "1.5s"),
        (90 * 10**9, "1m30s"),
        (3600 * 10**9, "1h0m0s"),
        (-(3661 * 10**9), "-1h1m1s"),
    ],
)
def test_duration_formats_like_go(nanos: int, text: str) -> None:
    """meta/v1 Duration is written as Go's time.Duration.String."""
    assert format_go_duration(nanos) == text
    assert decode_message(varint(1, nanos), "meta.v1.Duration") == text


def test_named_slice_wrapper_and_raw_extension() -> None:
    """ExtraValue (a Go []string) is a list; RawExtension holds embedded JSON."""
    user = message(
        2,
        string(1, "alice"),
        message(4, string(1, "scopes"), message(2, string(1, "a"), string(1, "b"))),
    )
    body = envelope("authentication.k8s.io/v1", "TokenReview", meta(), message(3, user))
    assert decode_object(body)["status"] == {
        "user": {"username": "alice", "extra": {"scopes": ["a", "b"]}}
    }
    assert decode_message(string(1, b'{"x": [1]}'), "runtime.RawExtension") == {
        "x": [1]
    }


def test_delete_options_in_any_group_version() -> None:
    """DeleteOptions is registered in every group version, as in metav1."""
    body = envelope("apps/v1", "DeleteOptions", varint(1, 0), string(4, "Foreground"))
    assert decode_object(body) == {
        "apiVersion": "apps/v1",
        "kind": "DeleteOptions",
        "gracePeriodSeconds": 0,
        "propagationPolicy": "Foreground",
    }


@pytest.mark.parametrize(
    ("body", "message_part"),
    [
        (b'{"kind": "ConfigMap"}', "magic"),
        (envelope("v1", "NoSuchKind"), "no protobuf schema"),
        (envelope("", "ConfigMap"), "no apiVersion"),
        (envelope("v1", "ConfigMap", encoding="gzip"), "contentEncoding"),
        (envelope("v1", "ConfigMap", meta(string(1, "x")))[:-1], "exceeds"),
        (envelope("v1", "ConfigMap", varint(1, 3)), "expected a message"),
        (envelope("v1", "ConfigMap", meta(varint(1, 3))), "wire type"),
        (envelope("v1", "ConfigMap", meta(string(1, b"\xff"))), "UTF-8"),
    ],
)
def test_malformed_bodies_raise_protobuf_error(body: bytes, message_part: str) -> None:
    """Malformed bodies, unknown kinds and encodings raise ProtobufError."""
    with pytest.raises(ProtobufError, match=message_part):
        decode_object(body)
