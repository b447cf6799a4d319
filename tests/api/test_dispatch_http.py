"""The request cycle of a resource request (``kapi.api.dispatch``): the order
kube-apiserver's handler chain checks a request in, and the headers its
answer carries."""

from __future__ import annotations

import json

import requests

from tests.api.conftest import assert_status


def test_a_stranger_is_refused_before_the_encoding_is_negotiated(kapi_server, namespace):
    """Authentication comes before negotiation: an unknown token asking for an
    encoding nobody serves gets 401 with the Bearer challenge, not 406, and
    learns nothing about the path."""
    url = f"{kapi_server.url}/api/v1/namespaces/{namespace}/configmaps"
    for headers in ({"Accept": "text/html"}, {"Accept": "text/html", "Authorization": "Bearer wrong"}):
        refused = requests.get(url, headers=headers, verify=str(kapi_server.ca_path), timeout=10)
        assert_status(refused, 401, "Unauthorized")
        assert refused.headers["WWW-Authenticate"] == 'Bearer realm="kapi"'
        created = requests.post(url, headers=headers, verify=str(kapi_server.ca_path), timeout=10,
                                json={"metadata": {"name": "stranger"}})
        assert_status(created, 401, "Unauthorized")


def test_an_unacceptable_encoding_is_406_and_nothing_is_written(api, namespace):
    """A known user whose ``Accept`` names nothing kapi writes gets 406 as
    JSON, before the handler runs: a create is not made."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    refused = api.post(base, {"metadata": {"name": "unread"}}, headers={"Accept": "text/html"})
    status = assert_status(refused, 406, "NotAcceptable")
    assert "application/json" in status["message"]
    assert_status(api.get(f"{base}/unread"), 404, "NotFound")


def test_a_body_is_decoded_by_its_content_type(api, namespace):
    """JSON, YAML, none (the Python client sends no ``Content-Type``: JSON),
    and an unknown type: 415 with nothing written."""
    base = f"/api/v1/namespaces/{namespace}/configmaps"
    as_json = json.dumps({"metadata": {"name": "j"}, "data": {"k": "json"}})
    assert api.request("POST", base, data=as_json, headers={"Content-Type": "application/json"}).status_code == 201
    as_yaml = "metadata:\n  name: y\ndata:\n  k: yaml\n"
    assert api.request("POST", base, data=as_yaml, headers={"Content-Type": "application/yaml"}).status_code == 201
    bare = requests.Request("POST", api.server.url + base, data=json.dumps({"metadata": {"name": "n"}}).encode(),
                            headers={"Authorization": f"Bearer {api.server.token}"}).prepare()
    assert "Content-Type" not in bare.headers
    assert api.session.send(bare, timeout=30).status_code == 201
    odd = api.request("POST", base, data=json.dumps({"metadata": {"name": "odd"}}),
                      headers={"Content-Type": "text/x-unknown"})
    assert_status(odd, 415, "UnsupportedMediaType")
    names = {item["metadata"]["name"]: item.get("data") for item in api.get(base).json()["items"]}
    assert names["j"] == {"k": "json"} and names["y"] == {"k": "yaml"} and "n" in names
    assert "odd" not in names


def test_an_answer_carries_kube_apiserver_headers(api, namespace):
    """A write's answer: the negotiated ``Content-Type``, ``Audit-Id``,
    ``Content-Length``, ``X-Content-Type-Options``, and none of DRF's own
    (``Allow``, ``Vary: Accept``), which kube-apiserver does not send."""
    created = api.post(f"/api/v1/namespaces/{namespace}/configmaps", {"metadata": {"name": "h"}})
    assert created.status_code == 201, created.text
    headers = created.headers
    assert headers["Content-Type"] == "application/json"
    assert headers["Audit-Id"] and headers["X-Content-Type-Options"] == "nosniff"
    assert int(headers["Content-Length"]) == len(created.content)
    assert "Allow" not in headers and "Vary" not in headers
    missing = api.get(f"/api/v1/namespaces/{namespace}/configmaps/absent", headers={"Accept": "application/yaml"})
    assert missing.status_code == 404
    assert missing.headers["Content-Type"] == "application/yaml"


def test_options_keeps_drf_s_own_dispatch_and_its_rendered_answer(kapi_server, namespace):
    """OPTIONS (and TRACE) on a resource URL go through DRF's dispatch, whose
    answer is a template response that must be rendered before it is sent
    (``APIBridge._get_response``): the caller gets the view's metadata as JSON
    with its ``Allow``, and a stranger still gets 401."""
    url = f"{kapi_server.url}/api/v1/namespaces/{namespace}/configmaps"
    answer = requests.options(url, headers={"Authorization": f"Bearer {kapi_server.token}"},
                              verify=str(kapi_server.ca_path), timeout=10)
    assert answer.status_code == 200, answer.text
    assert answer.headers["Content-Type"] == "application/json"
    assert int(answer.headers["Content-Length"]) == len(answer.content)
    assert "PATCH" in answer.headers["Allow"]
    assert "application/json" in answer.json()["renders"]
    stranger = requests.options(url, verify=str(kapi_server.ca_path), timeout=10)
    assert stranger.status_code == 401
