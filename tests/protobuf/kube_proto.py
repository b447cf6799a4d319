"""An independent Kubernetes protobuf reader for tests, built from the published .proto files.

``proto/`` holds Kubernetes' own ``generated.proto`` files (see ``proto/SOURCE``).
protoc (from ``grpcio-tools``) compiles them into descriptors and the ``protobuf``
runtime parses the bytes, so nothing here comes from ``kapi.protobuf``'s tables.
``to_json`` then writes a parsed message the way Go's ``encoding/json`` writes the
same Go value, with the few rules the .proto files cannot say written out below
(the types with their own JSON form and the embedded structs).

Only fields present on the wire are written, so a field kapi left out stays out
and a zero value kapi wrote (a pointer to 0) stays in.
"""

from __future__ import annotations

import base64
import functools
import json
import struct
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import FieldDescriptor

__all__ = ["MAGIC", "decode_object", "decode_watch_frames", "message_class", "to_json"]

PROTO_ROOT = Path(__file__).resolve().parent / "proto"
MAGIC = b"k8s\x00"

_META = "k8s.io.apimachinery.pkg.apis.meta.v1."
_APIEXTENSIONS = "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1."
_SCHEMA_PROPS = _APIEXTENSIONS + "JSONSchemaProps"
#: Messages whose Go type has its own JSON marshaller.
_SPECIAL = {
    _APIEXTENSIONS + "JSON",
    _APIEXTENSIONS + "JSONSchemaPropsOrArray",
    _APIEXTENSIONS + "JSONSchemaPropsOrBool",
    _APIEXTENSIONS + "JSONSchemaPropsOrStringArray",
    _META + "Time",
    _META + "MicroTime",
    _META + "Duration",
    _META + "FieldsV1",
    "k8s.io.apimachinery.pkg.runtime.RawExtension",
    "k8s.io.apimachinery.pkg.api.resource.Quantity",
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString",
}
#: Go struct fields embedded with ``json:",inline"`` (k8s.io/api types.go).
_INLINE = {
    ("k8s.io.api.core.v1.Volume", "volumeSource"),
    ("k8s.io.api.core.v1.PersistentVolumeSpec", "persistentVolumeSource"),
    ("k8s.io.api.core.v1.Probe", "handler"),
    ("k8s.io.api.core.v1.EphemeralContainer", "ephemeralContainerCommon"),
    ("k8s.io.api.core.v1.ConfigMapEnvSource", "localObjectReference"),
    ("k8s.io.api.core.v1.ConfigMapKeySelector", "localObjectReference"),
    ("k8s.io.api.core.v1.ConfigMapProjection", "localObjectReference"),
    ("k8s.io.api.core.v1.ConfigMapVolumeSource", "localObjectReference"),
    ("k8s.io.api.core.v1.SecretEnvSource", "localObjectReference"),
    ("k8s.io.api.core.v1.SecretKeySelector", "localObjectReference"),
    ("k8s.io.api.core.v1.SecretProjection", "localObjectReference"),
    ("k8s.io.api.admissionregistration.v1.RuleWithOperations", "rule"),
    (
        "k8s.io.api.admissionregistration.v1.NamedRuleWithOperations",
        "ruleWithOperations",
    ),
    ("k8s.io.api.networking.v1.IngressRule", "ingressRuleValue"),
    ("k8s.io.api.resource.v1.DeviceAllocationConfiguration", "deviceConfiguration"),
    ("k8s.io.api.resource.v1.DeviceClaimConfiguration", "deviceConfiguration"),
    ("k8s.io.api.resource.v1.DeviceClassConfiguration", "deviceConfiguration"),
}


#: Fields whose proto name is not their JSON name (Go json tags of k8s.io/api).
_JSON_NAMES = {
    (
        "k8s.io.api.admissionregistration.v1.MutatingWebhookConfiguration",
        "Webhooks",
    ): "webhooks",
    (
        "k8s.io.api.admissionregistration.v1.ValidatingWebhookConfiguration",
        "Webhooks",
    ): "webhooks",
    ("k8s.io.api.admissionregistration.v1.Validation", "Expression"): "expression",
    ("k8s.io.api.admissionregistration.v1.Variable", "Name"): "name",
    ("k8s.io.api.admissionregistration.v1.Variable", "Expression"): "expression",
    ("k8s.io.api.authentication.v1.BoundObjectReference", "uID"): "uid",
    (
        "k8s.io.api.networking.v1.IngressClassParametersReference",
        "aPIGroup",
    ): "apiGroup",
    # JSON Schema's own names (apiextensions types_jsonschema.go)
    **{
        (_SCHEMA_PROPS, proto_name): json_name
        for proto_name, json_name in {
            "schema": "$schema",
            "ref": "$ref",
            "xKubernetesPreserveUnknownFields": "x-kubernetes-preserve-unknown-fields",
            "xKubernetesEmbeddedResource": "x-kubernetes-embedded-resource",
            "xKubernetesIntOrString": "x-kubernetes-int-or-string",
            "xKubernetesListMapKeys": "x-kubernetes-list-map-keys",
            "xKubernetesListType": "x-kubernetes-list-type",
            "xKubernetesMapType": "x-kubernetes-map-type",
            "xKubernetesValidations": "x-kubernetes-validations",
        }.items()
    },
}


@functools.cache
def _pool() -> descriptor_pool.DescriptorPool:
    import grpc_tools

    protos = sorted(str(p.relative_to(PROTO_ROOT)) for p in PROTO_ROOT.rglob("*.proto"))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set.pb"
        well_known = Path(grpc_tools.__file__).parent / "_proto"
        # A child process: protoc's warnings (unused imports) stay in its stderr.
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "grpc_tools.protoc",
                f"-I{PROTO_ROOT}",
                f"-I{well_known}",
                "--include_imports",
                f"--descriptor_set_out={out}",
                *protos,
            ],
            capture_output=True,
            text=True,
        )
        assert run.returncode == 0, run.stderr
        files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    return pool


def message_class(full_name: str):
    """The generated class of a message (``k8s.io.api.core.v1.Pod``)."""
    return message_factory.GetMessageClass(_pool().FindMessageTypeByName(full_name))


def _proto_package(api_version: str) -> str:
    # The proto package is the group's first label: apps, rbac, flowcontrol...
    group, _, version = api_version.rpartition("/")
    if group == "meta.k8s.io":
        return "k8s.io.apimachinery.pkg.apis.meta." + version
    if group == "apiextensions.k8s.io":
        return "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions." + version
    if group == "apiregistration.k8s.io":
        return "k8s.io.kube_aggregator.pkg.apis.apiregistration." + version
    return f"k8s.io.api.{group.split('.')[0] if group else 'core'}.{version}"


#: meta/v1 kinds served under apiVersion v1 (or none): errors and legacy discovery.
_UNVERSIONED = {"Status", "APIVersions", "APIGroupList", "APIGroup", "APIResourceList"}


def decode_object(body: bytes) -> tuple[str, str, Any]:
    """Parse a ``k8s\\x00`` body: (apiVersion, kind, parsed message of that kind)."""
    assert body[:4] == MAGIC, body[:16]
    unknown = message_class("k8s.io.apimachinery.pkg.runtime.Unknown").FromString(
        body[4:]
    )
    api_version, kind = unknown.typeMeta.apiVersion, unknown.typeMeta.kind
    assert unknown.contentEncoding == "" and unknown.contentType == ""
    if kind in _UNVERSIONED:
        name = _META + kind
    else:
        name = f"{_proto_package(api_version)}.{kind}"
    return api_version, kind, message_class(name).FromString(unknown.raw)


def decode_watch_frames(data: bytes) -> tuple[list[tuple[str, bytes]], bytes]:
    """Split a protobuf watch stream into (type, object body) events.

    Each frame is a 4-byte big-endian length and a ``meta.v1.WatchEvent``;
    returns the events and the bytes of an incomplete last frame."""
    event_class = message_class(_META + "WatchEvent")
    events = []
    while len(data) >= 4:
        (size,) = struct.unpack(">I", data[:4])
        if len(data) < 4 + size:
            break
        event = event_class.FromString(data[4 : 4 + size])
        events.append((event.type, event.object.raw))
        data = data[4 + size :]
    return events, data


def to_json(message: Any) -> Any:
    """The JSON Go would write for ``message``, fields present on the wire only."""
    return _message(message)


def _message(message: Any) -> Any:
    descriptor = message.DESCRIPTOR
    name = descriptor.full_name
    if name in _SPECIAL:
        return _special(name, message)
    fields = descriptor.fields
    if len(fields) == 1 and fields[0].name == "items" and not name.endswith("List"):
        # A Go named slice (``type Verbs []string``).
        return [_value(fields[0], item) for item in message.items]
    out: dict[str, Any] = {}
    for field, value in message.ListFields():
        json_name = _JSON_NAMES.get((name, field.name), field.name)
        if (name, field.name) in _INLINE:
            out.update(_message(value))
        elif (
            field.message_type is not None and field.message_type.GetOptions().map_entry
        ):
            value_field = field.message_type.fields_by_name["value"]
            out[json_name] = {
                key: _value(value_field, item) for key, item in value.items()
            }
        elif field.is_repeated:
            out[json_name] = [_value(field, item) for item in value]
        else:
            out[json_name] = _value(field, value)
    return out


def _value(field: FieldDescriptor, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return _message(value)
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(value).decode()
    return value


def _special(name: str, message: Any) -> Any:
    short = name.rsplit(".", 1)[1]
    if short in ("Time", "MicroTime"):
        if not message.ByteSize():
            return None  # the zero time, JSON null
        moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=message.seconds)
        if short == "Time":
            return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
        moment += timedelta(microseconds=message.nanos // 1000)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if short == "Duration":
        return message.duration  # nanoseconds: no served kind has a Duration
    if short == "FieldsV1":
        return json.loads(message.Raw) if message.Raw else None
    if short == "JSON":
        return json.loads(message.raw) if message.raw else None
    if short == "JSONSchemaPropsOrArray":  # Go: the list if it has items
        if len(message.jSONSchemas):
            return [_message(item) for item in message.jSONSchemas]
        return _message(message.schema) if message.HasField("schema") else None
    if short == "JSONSchemaPropsOrBool":
        return (
            _message(message.schema) if message.HasField("schema") else message.allows
        )
    if short == "JSONSchemaPropsOrStringArray":
        if len(message.property):
            return list(message.property)
        return _message(message.schema) if message.HasField("schema") else None
    if short == "RawExtension":
        return json.loads(message.raw) if message.raw else None
    if short == "Quantity":
        return message.string
    if short == "IntOrString":
        return message.strVal if message.type == 1 else message.intVal
    raise AssertionError(name)
