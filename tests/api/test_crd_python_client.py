"""CRD lifecycle through the official Python client's dynamic client, and the
figure for CRD create -> first custom resource create succeeding."""

from __future__ import annotations

import time
import uuid

import pytest


@pytest.fixture
def dynamic(k8s_api_client):
    from kubernetes.dynamic import DynamicClient

    return DynamicClient(k8s_api_client)


def _crd(group: str) -> dict:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"things.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {
                                        "n": {"type": "integer", "maximum": 5}
                                    },
                                }
                            },
                        }
                    },
                }
            ],
        },
    }


def test_crd_lifecycle_with_dynamic_client(dynamic, namespace):
    """Create a CRD, use its kind at once, update the schema, delete the CRD and
    see the kind and its objects go."""
    from kubernetes.dynamic.exceptions import NotFoundError, UnprocessibleEntityError

    group = f"p{uuid.uuid4().hex[:8]}.example.com"
    crds = dynamic.resources.get(
        api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition"
    )
    crd = crds.create(body=_crd(group))
    things = dynamic.resources.get(api_version=f"{group}/v1", kind="Thing")
    things.create(
        namespace=namespace,
        body={
            "apiVersion": f"{group}/v1",
            "kind": "Thing",
            "metadata": {"name": "one"},
            "spec": {"n": 1},
        },
    )
    assert {c.type for c in crd.status.conditions} == {"NamesAccepted", "Established"}

    with pytest.raises(UnprocessibleEntityError) as invalid:
        things.create(
            namespace=namespace,
            body={
                "apiVersion": f"{group}/v1",
                "kind": "Thing",
                "metadata": {"name": "two"},
                "spec": {"n": 9},
            },
        )
    assert "spec.n" in invalid.value.body

    current = crds.get(name=f"things.{group}").to_dict()
    current["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "properties"
    ]["n"]["maximum"] = 10
    crds.replace(body=current)
    things.create(
        namespace=namespace,
        body={
            "apiVersion": f"{group}/v1",
            "kind": "Thing",
            "metadata": {"name": "two"},
            "spec": {"n": 9},
        },
    )
    assert len(things.get(namespace=namespace).items) == 2

    crds.delete(name=f"things.{group}")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            crds.get(name=f"things.{group}")
        except NotFoundError:
            break
        time.sleep(0.5)
    else:
        pytest.fail("the CRD was not removed")
    with pytest.raises(NotFoundError):
        things.get(namespace=namespace)


def test_crd_serves_its_kind_at_once(api, namespace):
    """Right after the CRD's POST answers, its custom resources can be created
    (bench/kinds.py times this)."""
    group = f"f{uuid.uuid4().hex[:8]}.example.com"
    assert (
        api.post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", _crd(group)
        ).status_code
        == 201
    )
    created = api.post(
        f"/apis/{group}/v1/namespaces/{namespace}/things",
        {"kind": "Thing", "metadata": {"name": "a"}, "spec": {"n": 1}},
    )
    assert created.status_code == 201, created.text
    api.delete(
        f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/things.{group}"
    )
