"""``selectableFields`` of a CRD version: ``kubectl get --field-selector`` on
those paths filters custom resources (lists and watches); other fields are
refused with 400 as kube does; bad declarations refuse the CRD."""

from __future__ import annotations

import json
import textwrap
import uuid

import pytest

from tests.api.conftest import assert_status
from tests.api.test_crd_http import CRD_PATH


def _crd(group: str, selectable: list[dict]) -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"shelves.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "shelves", "singular": "shelf", "kind": "Shelf"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "selectableFields": selectable,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {
                                        "color": {"type": "string"},
                                        "levels": {"type": "integer"},
                                        "open": {"type": "boolean"},
                                        "owner": {
                                            "type": "object",
                                            "properties": {"team": {"type": "string"}},
                                        },
                                        "tags": {
                                            "type": "array",
                                            "items": {"type": "string"},
                                        },
                                    },
                                }
                            },
                        }
                    },
                }
            ],
        },
    }


SELECTABLE = [
    {"jsonPath": ".spec.color"},
    {"jsonPath": ".spec.levels"},
    {"jsonPath": ".spec.open"},
    {"jsonPath": ".spec.owner.team"},
]


@pytest.fixture(scope="module")
def shelves(api, kapi_server):
    group = f"s{uuid.uuid4().hex[:8]}.example.com"
    created = api.post(CRD_PATH, _crd(group, SELECTABLE))
    assert created.status_code == 201, created.text
    namespace = f"t-{uuid.uuid4().hex[:10]}"
    assert api.post("/api/v1/namespaces", {"metadata": {"name": namespace}}).ok
    manifests = []
    for name, color, levels, is_open, team in (
        ("red-3", "red", 3, True, "books"),
        ("red-5", "red", 5, False, "games"),
        ("blue-3", "blue", 3, False, "books"),
    ):
        manifests.append(
            textwrap.dedent(
                f"""\
                apiVersion: {group}/v1
                kind: Shelf
                metadata: {{name: {name}, namespace: {namespace}}}
                spec:
                  color: {color}
                  levels: {levels}
                  open: {str(is_open).lower()}
                  owner: {{team: {team}}}
                """
            )
        )
    kapi_server.kubectl("apply", "-f", "-", input="---\n".join(manifests))
    yield group, namespace
    api.delete(f"/api/v1/namespaces/{namespace}")
    api.delete(f"{CRD_PATH}/shelves.{group}")


def _names(kapi_server, group: str, namespace: str, selector: str) -> list[str]:
    result = kapi_server.kubectl(
        "get",
        f"shelves.{group}",
        "-n",
        namespace,
        "--field-selector",
        selector,
        "-o",
        "json",
    )
    return sorted(
        item["metadata"]["name"] for item in json.loads(result.stdout)["items"]
    )


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("spec.color=red", ["red-3", "red-5"]),
        ("spec.color!=red", ["blue-3"]),
        ("spec.levels=3", ["blue-3", "red-3"]),
        ("spec.open=true", ["red-3"]),
        ("spec.owner.team=books,spec.color=blue", ["blue-3"]),
        ("metadata.name=red-5", ["red-5"]),
        ("spec.color=green", []),
    ],
)
def test_kubectl_field_selector_on_selectable_fields(
    kapi_server, shelves, selector, expected
):
    group, namespace = shelves
    assert _names(kapi_server, group, namespace, selector) == expected


def test_unknown_field_is_refused_with_400(api, kapi_server, shelves):
    group, namespace = shelves
    url = f"/apis/{group}/v1/namespaces/{namespace}/shelves"
    status = assert_status(
        api.get(url, params={"fieldSelector": "spec.tags=a"}), 400, "BadRequest"
    )
    assert status["message"] == ("field label not supported: spec.tags"), status[
        "message"
    ]
    result = kapi_server.kubectl(
        "get",
        f"shelves.{group}",
        "-n",
        namespace,
        "--field-selector",
        "spec.x=1",
        check=False,
    )
    assert result.returncode != 0
    assert "field label not supported: spec.x" in result.stderr


def test_crd_keeps_its_selectable_fields(api, shelves):
    """The declaration is stored as written (clients read it back)."""
    group, _ = shelves
    crd = api.get(f"{CRD_PATH}/shelves.{group}").json()
    assert crd["spec"]["versions"][0]["selectableFields"] == SELECTABLE


@pytest.mark.parametrize(
    ("selectable", "field", "reason"),
    [
        (
            [{"jsonPath": ".spec.tags"}],
            "spec.versions[0].selectableFields[0].jsonPath",
            "FieldValueInvalid",
        ),
        (
            [{"jsonPath": ".spec.nope"}],
            "spec.versions[0].selectableFields[0].jsonPath",
            "FieldValueInvalid",
        ),
        (
            [{"jsonPath": "spec.color"}],
            "spec.versions[0].selectableFields[0].jsonPath",
            "FieldValueInvalid",
        ),
        ([{}], "spec.versions[0].selectableFields[0].jsonPath", "FieldValueRequired"),
        (
            [{"jsonPath": ".spec.color"}, {"jsonPath": ".spec.color"}],
            "spec.versions[0].selectableFields[1].jsonPath",
            "FieldValueDuplicate",
        ),
        (
            [{"jsonPath": f".spec.f{i}"} for i in range(9)],
            "spec.versions[0].selectableFields",
            "FieldValueTooMany",
        ),
    ],
)
def test_bad_selectable_fields_refuse_the_crd(api, selectable, field, reason):
    status = assert_status(
        api.post(CRD_PATH, _crd(f"b{uuid.uuid4().hex[:6]}.example.com", selectable)),
        422,
        "Invalid",
    )
    causes = {(c["field"], c["reason"]) for c in status["details"]["causes"]}
    assert (field, reason) in causes, status["details"]["causes"]
