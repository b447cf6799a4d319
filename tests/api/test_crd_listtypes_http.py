"""``x-kubernetes-list-type: set`` and ``map`` lists of custom resources are
unique, refused with kube's ``Duplicate value`` at the element's path; CRDs
using list types wrongly are refused."""

from __future__ import annotations

import pytest

from tests.api.conftest import assert_status
from tests.api.crds import CRD_PATH, crd_manifest, served_collection

SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "tags": {
                    "type": "array",
                    "x-kubernetes-list-type": "set",
                    "items": {"type": "string"},
                },
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["port", "protocol"],
                    "items": {
                        "type": "object",
                        "properties": {
                            "port": {"type": "integer"},
                            "protocol": {"type": "string"},
                            "name": {"type": "string"},
                        },
                    },
                },
                "byName": {
                    "type": "object",
                    "additionalProperties": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {
                            "type": "object",
                            "properties": {"name": {"type": "string"}},
                        },
                    },
                },
                "free": {"type": "array", "items": {"type": "string"}},
            },
        }
    },
}



@pytest.fixture(scope="module")
def sets_url(api):
    yield from served_collection(api, "l", "sets", "Set", SCHEMA)


def _post(api, url: str, name: str, spec: dict):
    return api.post(url, {"kind": "Set", "metadata": {"name": name}, "spec": spec})


@pytest.mark.parametrize(
    ("spec", "causes"),
    [
        (
            {"tags": ["a", "b", "a", "a", "b"]},
            [
                ("spec.tags[2]", 'Duplicate value: "a"'),
                ("spec.tags[4]", 'Duplicate value: "b"'),
            ],
        ),
        (
            {
                "ports": [
                    {"port": 80, "protocol": "TCP"},
                    {"port": 80, "protocol": "UDP"},
                    {"port": 80, "protocol": "TCP", "name": "again"},
                ]
            },
            [
                (
                    "spec.ports[2]",
                    'Duplicate value: map[string]interface {}{"port":80, "protocol":"TCP"}',
                )
            ],
        ),
        (
            {"byName": {"x": [{"name": "n"}, {"name": "n"}]}},
            [
                (
                    "spec.byName[x][1]",
                    'Duplicate value: map[string]interface {}{"name":"n"}',
                )
            ],
        ),
        (
            {"ports": [{"name": "no-keys"}, {"name": "no-keys-either"}]},
            [("spec.ports[1]", "Duplicate value: map[string]interface {}{}")],
        ),
    ],
)
def test_duplicates_are_refused_at_their_path(api, sets_url, spec, causes):
    status = assert_status(_post(api, sets_url, "dup", spec), 422, "Invalid")
    got = [
        (c["field"], c["message"])
        for c in status["details"]["causes"]
        if c["reason"] == "FieldValueDuplicate"
    ]
    assert got == causes, status


def test_unique_lists_and_plain_lists_are_accepted(api, sets_url):
    spec = {
        "tags": ["a", "b"],
        "ports": [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"}],
        "byName": {"x": [{"name": "n"}], "y": [{"name": "n"}]},
        "free": ["same", "same"],
    }
    created = _post(api, sets_url, "ok", spec)
    assert created.status_code == 201, created.text
    current = created.json()
    current["spec"]["tags"].append("b")
    status = assert_status(api.put(f"{sets_url}/ok", current), 422, "Invalid")
    assert status["details"]["causes"][0]["field"] == "spec.tags[2]"


def test_crd_with_a_bad_list_type_is_refused(api):
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "keys": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "items": {"type": "string"},
                    },
                    "odd": {
                        "type": "array",
                        "x-kubernetes-list-type": "bag",
                        "items": {"type": "string"},
                    },
                },
            }
        },
    }
    status = assert_status(
        api.post(CRD_PATH, crd_manifest("badlist.example.com", "sets", "Set", schema)), 422, "Invalid"
    )
    at = "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties"
    fields = {c["field"]: c["reason"] for c in status["details"]["causes"]}
    assert fields == {
        f"{at}[keys].x-kubernetes-list-map-keys": "FieldValueRequired",
        f"{at}[keys].items.type": "FieldValueInvalid",
        f"{at}[odd].x-kubernetes-list-type": "FieldValueNotSupported",
    }, fields
