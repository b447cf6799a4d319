"""Answers bigger than the bridge's send slice (``kapi.api.bridge.SEND_SLICE``)
arrive whole: the body goes out in slices, each after the connection took the
one before, under the one Content-Length of the whole answer.
"""

from __future__ import annotations

import json

from tests.api.conftest import own

#: ``kapi.api.bridge.SEND_SLICE`` (importing the bridge would need Django set
#: up in the test process; tests/api/test_bridge_routes.py checks it is this).
SEND_SLICE = 1 << 20


def _configmap(name: str, size: int) -> dict:
    return {"metadata": {"name": name}, "data": {"payload": name[-1] * size}}


def test_a_list_bigger_than_a_slice_arrives_whole(api, namespace):
    # Four ConfigMaps of 700 KB each: a list body of about 2.8 MB, three slices.
    names = [f"big-{i}" for i in range(4)]
    for name in names:
        response = api.post(f"/api/v1/namespaces/{namespace}/configmaps", _configmap(name, 700_000))
        assert response.status_code == 201, response.text[:300]
    for params in ({}, {"resourceVersion": "0"}):
        # Not compressed (curl's default): sent as it is, in slices.
        response = api.get(
            f"/api/v1/namespaces/{namespace}/configmaps", params=params, stream=True,
            headers={"Accept-Encoding": "identity"},
        )
        assert "Content-Encoding" not in response.headers
        body = response.raw.read()
        assert response.status_code == 200
        assert len(body) > 2 * SEND_SLICE
        assert int(response.headers["Content-Length"]) == len(body)
        assert body.endswith(b"}\n")
        listed = json.loads(body)
        assert listed["kind"] == "ConfigMapList"
        items = own(listed["items"])
        assert sorted(i["metadata"]["name"] for i in items) == names
        assert all(i["data"]["payload"] == i["metadata"]["name"][-1] * 700_000 for i in items)


def test_an_empty_list_is_still_a_list(api, namespace):
    response = api.get(f"/api/v1/namespaces/{namespace}/secrets")
    assert response.status_code == 200
    assert response.content.endswith(b"}\n")
    listed = response.json()
    assert listed["kind"] == "SecretList" and listed["items"] == []
